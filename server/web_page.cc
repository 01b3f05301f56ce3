#include "server/web_page.h"

namespace dacpp::server {
namespace {

const char kPage[] = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dacpp depth viewer</title>
<link rel="icon" href="data:,">
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;background:#111;color:#ddd}
#drop{border:2px dashed #666;padding:1.5em;text-align:center;cursor:pointer}
#drop.over{border-color:#4af}
canvas,img{max-width:30vw;border:1px solid #333;background:#000}
#photo,#depth{width:min(30vw,480px);height:auto}
#depth{image-rendering:pixelated}
.row{display:flex;gap:1em;margin-top:1em;flex-wrap:wrap;align-items:flex-start}
#status{margin-top:.5em;white-space:pre-wrap}
.err{color:#f77}
</style></head><body>
<h2>dacpp depth viewer</h2>
<div id="drop">Drop a photo here, or click to choose one
<input id="file" type="file" accept="image/*" style="display:none"></div>
<label>Bearer token (only if the server requires one): <input id="token" type="password"></label>
<div id="status"></div>
<div class="row"><img id="photo" alt="" hidden><canvas id="depth" width="1" height="1" hidden></canvas>
<canvas id="cloud" width="640" height="480" title="drag to rotate, wheel to zoom"></canvas></div>
<script>
"use strict";
const $ = id => document.getElementById(id);
function turbo(t) {
  t = Math.min(1, Math.max(0, t));
  const r = 0.13572138 + t*(4.61539260 + t*(-42.66032258 + t*(132.13108234 + t*(-152.94239396 + t*59.28637943))));
  const g = 0.09140261 + t*(2.19418839 + t*(4.84296658 + t*(-14.18503333 + t*(4.27729857 + t*2.82956604))));
  const b = 0.10667330 + t*(12.64194608 + t*(-60.58204836 + t*(110.36276771 + t*(-89.90310912 + t*27.34824973))));
  return [r, g, b].map(v => Math.round(255 * Math.min(1, Math.max(0, v))));
}
function range(v) {
  const s = Array.from(v).filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return [0, 1];
  const lo = s[Math.floor(0.02 * (s.length - 1))], hi = s[Math.floor(0.98 * (s.length - 1))];
  return hi > lo ? [lo, hi] : [lo, lo + 1];
}
let cloud = null, yaw = 0, pitch = 0, zoom = 1;
function drawDepth(r) {
  const c = $("depth"), w = r.width, h = r.height;
  c.width = w; c.height = h;
  const ctx = c.getContext("2d"), img = ctx.createImageData(w, h), [lo, hi] = range(r.depth);
  for (let i = 0; i < w * h; i++) {
    const [R, G, B] = turbo((r.depth[i] - lo) / (hi - lo));
    img.data.set([R, G, B, 255], 4 * i);
  }
  ctx.putImageData(img, 0, 0);
  c.hidden = false;
}
function buildCloud(r, photo) {
  const w = r.width, h = r.height, tmp = document.createElement("canvas");
  tmp.width = w; tmp.height = h;
  const tctx = tmp.getContext("2d");
  tctx.drawImage(photo, 0, 0, w, h);
  const px = tctx.getImageData(0, 0, w, h).data;
  const K = r.intrinsics && r.intrinsics.length === 9 ? r.intrinsics : null;
  const f = K ? K[0] : 0.8 * Math.max(w, h), cx = K ? K[2] : w / 2, cy = K ? K[5] : h / 2;
  const [lo, hi] = range(r.depth), disparity = !K && !r.is_metric;
  const step = Math.max(1, Math.round(Math.sqrt(w * h / 60000)));
  const pts = [];
  let zsum = 0;
  for (let v = 0; v < h; v += step) for (let u = 0; u < w; u += step) {
    const d = r.depth[v * w + u];
    if (!Number.isFinite(d)) continue;
    const z = disparity ? 1 / (0.05 + (Math.min(Math.max(d, lo), hi) - lo) / (hi - lo)) : d;
    if (!(z > 0)) continue;
    const o = 4 * (v * w + u);
    pts.push([(u - cx) / f * z, (v - cy) / f * z, z, px[o], px[o + 1], px[o + 2]]);
    zsum += z;
  }
  return {pts, zc: pts.length ? zsum / pts.length : 1};
}
function drawCloud() {
  if (!cloud) return;
  const c = $("cloud"), ctx = c.getContext("2d"), W = c.width, H = c.height;
  const img = ctx.createImageData(W, H), zbuf = new Float32Array(W * H).fill(Infinity);
  const cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(pitch), sp = Math.sin(pitch);
  const F = 0.9 * Math.max(W, H) * zoom, dist = 2 * cloud.zc;
  for (const [x, y, z0, R, G, B] of cloud.pts) {
    const z = z0 - cloud.zc;
    const x1 = cy * x + sy * z, z1 = -sy * x + cy * z;
    const y2 = cp * y - sp * z1, z2 = sp * y + cp * z1 + dist;
    if (z2 <= 1e-6) continue;
    const u = Math.round(W / 2 + F * x1 / z2), v = Math.round(H / 2 + F * y2 / z2);
    if (u < 0 || v < 0 || u >= W || v >= H || z2 >= zbuf[v * W + u]) continue;
    zbuf[v * W + u] = z2;
    img.data.set([R, G, B, 255], 4 * (v * W + u));
  }
  ctx.putImageData(img, 0, 0);
}
async function run(file) {
  const url = await new Promise((ok, bad) => {
    const fr = new FileReader(); fr.onload = () => ok(fr.result); fr.onerror = bad; fr.readAsDataURL(file);
  });
  const photo = $("photo");
  photo.src = url;
  await photo.decode();
  photo.hidden = false;
  $("status").className = ""; $("status").textContent = "running depth...";
  const headers = {"Content-Type": "application/json"};
  if ($("token").value) headers.Authorization = "Bearer " + $("token").value;
  const t0 = performance.now();
  const resp = await fetch("/v1/depth", {method: "POST", headers, body: JSON.stringify({image: url})});
  const body = await resp.json();
  if (!resp.ok) {
    $("status").className = "err";
    $("status").textContent = "HTTP " + resp.status + ": " + (body.error ? body.error.message : JSON.stringify(body));
    return;
  }
  $("status").textContent = body.width + "x" + body.height + " depth in " + Math.round(performance.now() - t0) +
    " ms" + (body.is_metric ? " (metric)" : "");
  drawDepth(body);
  cloud = buildCloud(body, photo);
  yaw = 0; pitch = 0; zoom = 1;
  drawCloud();
}
function start(file) {
  run(file).catch(e => {
    $("status").className = "err";
    $("status").textContent = "failed: " + (e && e.message ? e.message : e);
  });
}
const drop = $("drop");
drop.onclick = () => $("file").click();
$("file").onchange = e => e.target.files[0] && start(e.target.files[0]);
drop.ondragover = e => { e.preventDefault(); drop.classList.add("over"); };
drop.ondragleave = () => drop.classList.remove("over");
drop.ondrop = e => { e.preventDefault(); drop.classList.remove("over"); if (e.dataTransfer.files[0]) start(e.dataTransfer.files[0]); };
let drag = null;
$("cloud").onmousedown = e => { drag = [e.clientX, e.clientY]; };
window.onmouseup = () => { drag = null; };
window.onmousemove = e => {
  if (!drag) return;
  yaw += (e.clientX - drag[0]) * 0.01; pitch += (e.clientY - drag[1]) * 0.01;
  drag = [e.clientX, e.clientY]; drawCloud();
};
$("cloud").onwheel = e => { e.preventDefault(); zoom *= e.deltaY < 0 ? 1.1 : 1 / 1.1; drawCloud(); };
</script></body></html>
)HTML";

}  // namespace

std::string web_page_html() { return kPage; }

}  // namespace dacpp::server
