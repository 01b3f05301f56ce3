#!/usr/bin/python3
"""Load test for dacpp-server: C clients x N Depth requests each over gRPC, with a Health prober alongside.

Starts the server binary on a free port (or uses --addr of a running one), loads the model, and reports throughput,
Depth latency percentiles, the worst Health latency seen during the run, errors by status code, and the worker's
resident memory before and after (a growing number means a leak). Exit status 1 if any request failed.

  /usr/bin/python3 bench/server_load.py --server build/release/server/dacpp-server \
      --model tests/fixtures/tiny-da2.gguf --clients 8 --requests 500 --option size:70
"""
import argparse
import collections
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "server"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", help="dacpp-server binary to start (else --addr)")
    ap.add_argument("--addr", help="address of a running server")
    ap.add_argument("--proto-py", default=None, help="folder of backend_pb2.py (default: next to --server, py/)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--image", default=None)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--option", action="append", default=[], help="LoadModel option, e.g. size:70")
    args = ap.parse_args()
    if args.server:
        os.environ["DACPP_SERVER_BIN"] = os.path.abspath(args.server)
        os.environ.setdefault("DACPP_SERVER_PY", args.proto_py or os.path.join(os.path.dirname(args.server), "py"))
    elif args.proto_py:
        os.environ["DACPP_SERVER_PY"] = args.proto_py
    import grpc
    import server_harness as h

    srv = None
    if args.server:
        srv = h.Server()
        srv.wait_ready()
        call, proc_pid = srv.call, srv.proc.pid
    else:
        channel = grpc.insecure_channel(args.addr)

        def call(rpc, request=None, timeout=60):
            req_t, resp_t = h.RPCS[rpc]
            fn = channel.unary_unary("/backend.Backend/" + rpc, request_serializer=req_t.SerializeToString,
                                     response_deserializer=resp_t.FromString)
            return fn(request if request is not None else req_t(), timeout=timeout)
        proc_pid = None
    model = os.path.abspath(args.model)
    r = call("LoadModel", h.pb.ModelOptions(Model=os.path.basename(model), ModelFile=model, Options=args.option))
    if not r.success:
        sys.exit("load failed: " + r.message)
    image = os.path.abspath(args.image or h.IMAGE)
    worker_rss = lambda: call("Status").memory.breakdown["worker"]  # noqa: E731
    call("Depth", h.pb.DepthRequest(src=image, include_depth=True))  # warm-up
    rss0 = worker_rss()
    lat, codes, lock, done = [], collections.Counter(), threading.Lock(), threading.Event()

    def client():
        for _ in range(args.requests):
            t0 = time.time()
            try:
                call("Depth", h.pb.DepthRequest(src=image, include_depth=True), timeout=300)
                code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
            with lock:
                lat.append(time.time() - t0)
                codes[code] += 1

    health = []

    def prober():
        while not done.is_set():
            t0 = time.time()
            call("Health", timeout=10)
            health.append(time.time() - t0)
            time.sleep(0.05)

    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    probe = threading.Thread(target=prober)
    t0 = time.time()
    probe.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - t0
    done.set()
    probe.join()
    rss1 = worker_rss()
    lat.sort()
    pct = lambda p: 1000 * lat[min(len(lat) - 1, int(p * len(lat)))]  # noqa: E731
    print("requests %d in %.1f s: %.1f req/s" % (len(lat), wall, len(lat) / wall))
    print("depth latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f" % (pct(0.5), pct(0.9), pct(0.99), 1000 * lat[-1]))
    print("health latency ms: max %.1f over %d probes" % (1000 * max(health or [0]), len(health)))
    print("status codes: %s" % dict(codes))
    print("worker RSS: %.1f MB -> %.1f MB" % (rss0 / 1e6, rss1 / 1e6))
    if srv:
        srv.stop()
    sys.exit(0 if codes.get("OK", 0) == len(lat) else 1)


if __name__ == "__main__":
    main()
