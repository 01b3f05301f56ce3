"""Shared helpers for the parity scripts (make_fixtures.py, full_size.py).

They run the OFFICIAL Depth Anything V2 / V3 Python code, which is never committed: it lives in a git-ignored
folder (default .ref/da2, .ref/da3) together with its pure-Python dependencies (.ref/pydeps: omegaconf,
antlr4, addict; .ref/pydeps_local: einops, only where the interpreter lacks it). Nothing here edits the
official files: everything missing on old torch builds is shimmed at import time, and every shim applied is
recorded in the output manifest.

Weights are the modules' own default init (fixed seed), then perturbed away from the degenerate defaults
(LayerScale gamma 1, LayerNorm 1/0, zero biases, zero tokens) so that parity tests cannot pass by accident,
and the last 1x1 conv of each output head is rescaled/shifted so the activation (ReLU, exp, sigmoid) sees
logits in a useful range. All reference computations run in float32 on the CPU.
"""
import contextlib
import json
import math
import os
import struct
import sys
import types

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIMS = []


# ----------------------------------------------------------------------------------------------------------
# Environment: paths and shims
# ----------------------------------------------------------------------------------------------------------
def default_paths():
    ref = os.path.join(REPO, ".ref")
    return dict(da2=os.path.join(ref, "da2"), da3=os.path.join(ref, "da3"),
                pydeps=[os.path.join(ref, "pydeps"), os.path.join(ref, "pydeps_local")])


def setup(da2_src=None, da3_src=None, pydeps=(), threads=None):
    """Put the official sources and their deps on sys.path, install shims, return the torch module."""
    for p in list(pydeps) + [da2_src, os.path.join(da3_src, "src") if da3_src else None]:
        if p and os.path.isdir(p) and p not in sys.path:
            sys.path.insert(0, p)
    import torch
    _install_shims(torch)
    if threads:
        torch.set_num_threads(threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def _install_shims(torch):
    import torch.nn.functional as F
    if not hasattr(F, "scaled_dot_product_attention"):  # torch < 2.0
        def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
            s = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
            a = (q * s) @ k.transpose(-2, -1)
            if attn_mask is not None:
                a = a.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else a + attn_mask
            return a.softmax(dim=-1) @ v
        F.scaled_dot_product_attention = sdpa
        SHIMS.append("torch.nn.functional.scaled_dot_product_attention (softmax(q*scale @ k^T) @ v)")
    try:
        import torchvision.transforms  # noqa: F401
    except ImportError:
        _shim_torchvision(torch)
    for name in ("tqdm", "imageio"):
        try:
            __import__(name)
        except ImportError:
            mod = types.ModuleType(name)
            if name == "tqdm":
                mod.tqdm = lambda it=None, *a, **k: it
            sys.modules[name] = mod
            SHIMS.append(f"{name} (stub module; only imported, unused on the paths run here)")


def _shim_torchvision(torch):
    """torchvision.transforms Compose/ToTensor/Normalize/CenterCrop with torchvision's semantics."""
    class Compose:
        def __init__(self, ts): self.ts = ts
        def __call__(self, x):
            for t in self.ts:
                x = t(x)
            return x

    class ToTensor:  # PIL/HWC uint8 -> CHW float32 in [0, 1]
        def __call__(self, pic):
            a = np.array(pic, copy=True)
            if a.ndim == 2:
                a = a[:, :, None]
            t = torch.from_numpy(a).permute(2, 0, 1).contiguous()
            return t.to(torch.float32).div(255) if t.dtype == torch.uint8 else t

    class Normalize:
        def __init__(self, mean, std): self.mean, self.std = mean, std
        def __call__(self, t):
            m = torch.as_tensor(self.mean, dtype=t.dtype).view(-1, 1, 1)
            s = torch.as_tensor(self.std, dtype=t.dtype).view(-1, 1, 1)
            return t.sub(m).div(s)

    class CenterCrop:
        def __init__(self, size): self.size = size
        def __call__(self, t):
            h, w = self.size
            top, left = int(round((t.shape[-2] - h) / 2.0)), int(round((t.shape[-1] - w) / 2.0))
            return t[..., top:top + h, left:left + w]

    tv = types.ModuleType("torchvision")
    tr = types.ModuleType("torchvision.transforms")
    tr.Compose, tr.ToTensor, tr.Normalize, tr.CenterCrop = Compose, ToTensor, Normalize, CenterCrop
    tv.transforms = tr
    sys.modules["torchvision"], sys.modules["torchvision.transforms"] = tv, tr
    SHIMS.append("torchvision.transforms (Compose, ToTensor, Normalize, CenterCrop re-implemented)")


# ----------------------------------------------------------------------------------------------------------
# Model construction
# ----------------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def vit_dims(cls, dims):
    """While active, DinoVisionTransformer(...) is built with dims (embed_dim, depth, num_heads) overridden."""
    if not dims:
        yield
        return
    orig = cls.__init__

    def init(self, *a, **kw):
        kw.update(dims)
        orig(self, *a, **kw)
    cls.__init__ = init
    try:
        yield
    finally:
        cls.__init__ = orig


def perturb(torch, model, seed):
    """Move parameters away from degenerate inits: LayerScale gamma ~ U(0.5,1.5), LayerNorm weight 1+0.1*randn
    and bias 0.1*randn, all-zero biases 0.1*randn, tokens/pos_embed 0.5*randn (replacing any init)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for mname, m in model.named_modules():
            cname = type(m).__name__
            if cname == "LayerScale":
                m.gamma.copy_(torch.rand(m.gamma.shape, generator=g) + 0.5)
            elif isinstance(m, torch.nn.LayerNorm) and m.elementwise_affine:
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=g))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=g))
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if leaf in ("cls_token", "pos_embed", "mask_token", "camera_token"):
                p.copy_(0.5 * torch.randn(p.shape, generator=g))
            elif leaf == "bias" and not bool(p.abs().gt(0).any()):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))


def calibrate_conv(torch, conv, logits, channel, std, quantile, target):
    """Rescale output channel `channel` of the 1x1 conv producing `logits` [N,C,H,W] so its std becomes `std`,
    then shift its bias so that the given quantile of the logits equals `target`."""
    with torch.no_grad():
        x = logits[:, channel].double().flatten()
        k = std / float(x.std())
        conv.weight[channel] *= k
        conv.bias[channel] *= k
        q = float(torch.quantile(x * k, quantile))
        conv.bias[channel] += target - q


# ----------------------------------------------------------------------------------------------------------
# Capturing intermediates
# ----------------------------------------------------------------------------------------------------------
class Capture:
    """Forward hooks that clone what they see (later in-place ops cannot change the capture)."""

    def __init__(self):
        self.t, self.handles = {}, []

    def output(self, module, name, fn=lambda o: o):
        self.handles.append(module.register_forward_hook(
            lambda m, i, o: self.t.__setitem__(name, _clone(fn(o)))))

    def inputs(self, module, name, fn=lambda i: i):
        self.handles.append(module.register_forward_pre_hook(
            lambda m, i: self.t.__setitem__(name, _clone(fn(i)))))

    def close(self):
        for h in self.handles:
            h.remove()
        self.handles = []


def _clone(x):
    if hasattr(x, "detach"):
        return x.detach().clone()
    if isinstance(x, dict):
        return {k: _clone(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x) if not hasattr(x, "_fields") else x
    return x


def npf(t):
    return np.ascontiguousarray(t.detach().cpu().float().numpy())


# ----------------------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------------------
def save_safetensors(torch, tensors, path):
    """safetensors file (the official format); uses the safetensors package when present."""
    # clone: DualDPT shares one LayerNorm across output_conv2_aux.{0-3}.2, and save_file refuses shared storage;
    # every key is written (as bench/da3_official.py does)
    tensors = {k: v.detach().to("cpu").clone().contiguous() for k, v in tensors.items()}
    try:
        from safetensors.torch import save_file
        save_file(tensors, path)
        return
    except ImportError:
        pass
    if "own safetensors writer (package absent)" not in SHIMS:
        SHIMS.append("own safetensors writer (package absent)")
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}
    header, blobs, off = {}, [], 0
    for k in sorted(tensors):
        v = tensors[k]
        b = v.view(-1).view(torch.uint8).numpy().tobytes() if v.numel() else b""
        header[k] = {"dtype": names[v.dtype], "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def save_arrays(outdir, arrays):
    os.makedirs(outdir, exist_ok=True)
    info = {}
    for k, v in arrays.items():
        a = np.ascontiguousarray(v, dtype=np.float32)
        np.save(os.path.join(outdir, k + ".npy"), a)
        info[k] = list(a.shape)
    return info


# ----------------------------------------------------------------------------------------------------------
# Depth Anything V2
# ----------------------------------------------------------------------------------------------------------
def build_da2(torch, encoder, metric, seed, dims=None, features=None, out_channels=None, max_depth=20.0):
    """DepthAnythingV2 exactly as the official dpt.py builds it (optionally with tiny ViT dims and head widths)."""
    import importlib
    dinov2 = importlib.import_module("depth_anything_v2.dinov2")
    dpt = importlib.import_module("metric_depth.depth_anything_v2.dpt" if metric else "depth_anything_v2.dpt")
    if metric:  # metric_depth has its own copy of the dinov2 module; patch the one it uses
        dinov2 = importlib.import_module("metric_depth.depth_anything_v2.dinov2")
    official = {"vits": (64, [48, 96, 192, 384]), "vitb": (128, [96, 192, 384, 768]),
                "vitl": (256, [256, 512, 1024, 1024]), "vitg": (384, [1536, 1536, 1536, 1536])}
    f, oc = official[encoder]
    kw = dict(encoder=encoder, features=features or f, out_channels=out_channels or oc)
    if metric:
        kw["max_depth"] = max_depth
    torch.manual_seed(seed)
    with vit_dims(dinov2.DinoVisionTransformer, dims):
        model = dpt.DepthAnythingV2(**kw)
    perturb(torch, model, seed + 1)
    return model.eval()


def run_da2(torch, model, bgr, input_size, calibrate):
    """Official infer_image on a BGR uint8 image, with hooks; returns the arrays to save."""
    cap = Capture()
    head = model.depth_head
    # infer_image calls self.forward(image) directly (no module hooks): wrap the instance's forward instead
    cls_forward = type(model).forward

    def forward(x):
        x = x.to("cpu")  # image2tensor moves the input to CUDA when there is one; the reference stays on the CPU
        cap.t["input"] = x.detach().clone()
        y = cls_forward(model, x)
        cap.t["depth"] = y.detach().clone()
        return y
    model.forward = forward
    cap.inputs(head, "feats", lambda i: [f[0] for f in i[0]])
    for k in range(1, 5):
        cap.output(getattr(head.scratch, f"layer{k}_rn"), f"rn{k}")
    last = head.scratch.output_conv2[2]
    cap.output(last, "logits")
    with torch.no_grad():
        full = model.infer_image(bgr, input_size)
        if calibrate:  # first run only measured the logits; fix the last conv and run again
            metric = not isinstance(head.scratch.output_conv2[3], torch.nn.ReLU)
            if metric:
                calibrate_conv(torch, last, cap.t["logits"], 0, 1.5, 0.5, 0.0)
            else:
                calibrate_conv(torch, last, cap.t["logits"], 0, 1.0, 0.1, 0.0)
            full = model.infer_image(bgr, input_size)
    cap.close()
    del model.forward
    t = cap.t
    out = {"input": npf(t["input"])}
    for i, f in enumerate(t["feats"]):
        out[f"feat{i}"] = npf(f)
    for k in range(1, 5):
        out[f"rn{k}"] = npf(t[f"rn{k}"])
    out["depth"] = npf(t["depth"])
    out["depth_full"] = np.asarray(full, dtype=np.float32)
    return out


def da2_state_dict(model):
    return {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}


# ----------------------------------------------------------------------------------------------------------
# Depth Anything 3
# ----------------------------------------------------------------------------------------------------------
def build_da3(torch, preset, seed, dims=None, head=None, cam_dim=None):
    """DepthAnything3Net from the official YAML preset through the official config system. `head` overrides
    head keys (dim_in, features, out_channels); `cam_dim` sets cam_enc.dim_out / cam_dec.dim_in (C, 2C)."""
    from depth_anything_3.cfg import load_config, create_object
    from depth_anything_3.registry import MODEL_REGISTRY
    from depth_anything_3.model.dinov2 import vision_transformer as vt
    cfg = load_config(MODEL_REGISTRY[preset])
    for k, v in (head or {}).items():
        cfg.head[k] = v
    if cam_dim and "cam_enc" in cfg:
        cfg.cam_enc.dim_out, cfg.cam_dec.dim_in = cam_dim
    torch.manual_seed(seed)
    with vit_dims(vt.DinoVisionTransformer, dims):
        model = create_object(cfg)
    perturb(torch, model, seed + 1)
    return model.eval()


def da3_preprocess(torch, images_rgb, process_res, method="upper_bound_resize"):
    """Official InputProcessor (sequential) on RGB uint8 arrays -> (1, N, 3, H, W) float32."""
    from depth_anything_3.utils.io.input_processor import InputProcessor
    x, _, _ = InputProcessor()(image=list(images_rgb), process_res=process_res, process_res_method=method,
                               num_workers=1)
    return x[None].float()  # api.py::_prepare_model_inputs adds the batch dim


def run_da3(torch, model, x, calibrate):
    """model(x) as bench/da3_official.py calls it, with hooks; returns the arrays to save."""
    from depth_anything_3.model.dinov2 import vision_transformer as vt
    cap, picked = Capture(), []
    orig_sel = vt.select_reference_view

    def sel(*a, **k):
        r = orig_sel(*a, **k)
        picked.append(r.detach().clone())
        return r
    vt.select_reference_view = sel
    cap.output(model.backbone, "feats", lambda o: [f for f, _ in o[0]])
    cap.output(model.backbone, "cam_tokens", lambda o: [c for _, c in o[0]])
    for k in range(1, 5):
        cap.output(getattr(model.head.scratch, f"layer{k}_rn"), f"rn{k}")
    cap.output(model.head, "head", lambda o: dict(o))
    cap.output(model.head.scratch.output_conv2[-1], "logits")
    if hasattr(model.head.scratch, "sky_output_conv2"):
        cap.output(model.head.scratch.sky_output_conv2[-1], "sky_logits")
    if getattr(model, "cam_dec", None) is not None:
        cap.output(model.cam_dec.fc_fov[0], "fov_logits")

    def fwd():
        return model(x, None, None, [], False, False, "saddle_balanced")
    try:
        with torch.no_grad():
            out = fwd()
            if calibrate:
                lg = cap.t["logits"]
                calibrate_conv(torch, model.head.scratch.output_conv2[-1], lg, 0, 0.5, 0.5, 0.0)  # depth: exp
                if lg.shape[1] > 1:  # depth_conf: expp1
                    calibrate_conv(torch, model.head.scratch.output_conv2[-1], lg, 1, 0.5, 0.5, 0.0)
                if "sky_logits" in cap.t:  # relu; ~30% of pixels >= 0.3 (sky), so the sky post-process acts
                    calibrate_conv(torch, model.head.scratch.sky_output_conv2[-1], cap.t["sky_logits"], 0,
                                   0.5, 0.7, 0.3)
                if "fov_logits" in cap.t:  # fov_h, fov_w: ReLU of these; centre them at ~1 rad (not 0)
                    fov = cap.t["fov_logits"].reshape(-1, 2).double()
                    model.cam_dec.fc_fov[0].bias += (1.0 - fov.mean(0)).float()
                picked.clear()
                out = fwd()
    finally:
        vt.select_reference_view = orig_sel
        cap.close()
    t = cap.t
    S = x.shape[1]
    res = {"input": npf(x)}
    for i, f in enumerate(t["feats"]):  # (B,S,P,C) -> (S,P,C): with one view that is [1,P,C]
        res[f"feat{i}"] = npf(f[0])
    if getattr(model, "cam_dec", None) is not None:
        res["cam_token"] = npf(t["cam_tokens"][-1][0])  # (S, C'), slot 0 of the last out layer
    for k in range(1, 5):
        res[f"rn{k}"] = npf(t[f"rn{k}"])
    for k, v in t["head"].items():  # raw head outputs, before any post-processing
        res[k] = npf(v[0])
    for k in ("extrinsics", "intrinsics"):
        if k in out and out[k] is not None:
            res[k] = npf(out[k][0])
    if "sky" in t["head"]:
        res["depth_final"] = npf(out["depth"][0])  # after _process_mono_sky_estimation
    meta = {"ref_view": [int(v) for v in picked[-1].flatten()] if picked else None}
    return res, meta


def da3_write_model(torch, model, outdir, preset, extra=None):
    os.makedirs(outdir, exist_ok=True)
    sd = {"model." + k: v for k, v in model.state_dict().items()}
    save_safetensors(torch, sd, os.path.join(outdir, "model.safetensors"))
    cfg = {"model_name": preset}
    if extra:
        cfg.update(extra)
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)


def load_safetensors(torch, path):
    """Read a safetensors file (F32/F16/BF16/I64) into CPU tensors without the safetensors package."""
    kinds = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64}
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        raw = torch.frombuffer(bytearray(data[b:e]), dtype=torch.uint8) if e > b else torch.empty(0, dtype=torch.uint8)
        out[k] = raw.view(kinds[v["dtype"]]).reshape(v["shape"])
    return out


def verify_da3(torch, model, fixture_dir, ref_subdir, out_dir):
    """Load fixture_dir/model.safetensors into `model` (same structure), rerun it on the stored input.npy and
    save the recomputed arrays to out_dir (compare them with compare.py): checks this interpreter's official
    stack reproduces the fixture independently of preprocessing differences."""
    sd = load_safetensors(torch, os.path.join(fixture_dir, "model.safetensors"))
    model.load_state_dict({k[len("model."):]: v for k, v in sd.items()}, strict=True)
    x = torch.from_numpy(np.load(os.path.join(fixture_dir, ref_subdir, "input.npy")))
    arrays, meta = run_da3(torch, model, x, calibrate=False)
    save_arrays(out_dir, arrays)
    return meta
