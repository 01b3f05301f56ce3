"""Cross-check an official DA2 checkpoint against HF transformers' DepthAnythingForDepthEstimation (no network).

Given a directory made by make_fixtures.py / full_size.py (an official DA2 .pth plus the official reference
arrays input.npy, depth.npy, depth_full.npy), this script builds the transformers model with the matching
config (dims read from the state-dict shapes), loads the renamed weights (spec/models.md §4.10) and reports:

  (a) hf_pipeline  HF's own pipeline (DPTImageProcessor, §2c + forward + post_process_depth_estimation) on the
                   image vs the official infer_image result (depth_full.npy). Differs by design: HF fits the
                   side closer to scale 1 with PIL bicubic, and post-processes with bicubic/align_corners=False.
  (b) hf_forward   HF forward on the OFFICIAL preprocessed input (input.npy) vs the official raw depth
                   (depth.npy): isolates the pos-embed interpolation (HF: size=(gh, gw); official:
                   scale_factor=((gh+0.1)/M, (gw+0.1)/M)).
  (c) hf_forward_official_pos  as (b) with HF's interpolate_pos_encoding swapped for the official rule; this
                   should be float32-exact (~1e-6), which proves (b)'s gap is the pos-embed alone.

Prints the relative L2 of each, exits 0 (it measures, it does not judge), and writes hf_crosscheck.json to
$OUT when that is set. Needs torch, numpy, PIL and transformers (5.x tested in design; 4.45+ should work).

  python3 scripts/parity/hf_crosscheck.py tests/fixtures/models/da2_tiny_rel
  python3 scripts/parity/hf_crosscheck.py FULL/da2_vits [--checkpoint X.pth] [--image input.png]
      [--input-size 518] [--max-depth 20] [--device cuda]
  python3 scripts/parity/hf_crosscheck.py --self-test   # renaming + pos-embed rule only (no transformers)
"""
import argparse
import json
import math
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]


# ---- checkpoint → config + HF state dict (torch only) ------------------------------------------------------------

def infer_dims(sd):
    """ViT and head dimensions of an official DA2 state dict, from tensor shapes alone."""
    c = sd["pretrained.pos_embed"].shape[-1]
    blocks = {int(m.group(1)) for k in sd for m in [re.match(r"pretrained\.blocks\.(\d+)\.", k)] if m}
    depth = max(blocks) + 1
    # Official DA2 feeds these layers to the head (dpt.py intermediate_layer_idx); keyed by depth.
    out_layers = {12: [2, 5, 8, 11], 24: [4, 11, 17, 23], 40: [9, 19, 29, 39]}.get(depth)
    if out_layers is None:
        raise SystemExit(f"checkpoint has {depth} blocks: no official DA2 layer selection for that depth")
    return dict(
        embed_dim=c,
        depth=depth,
        num_heads=max(1, c // 64),
        out_layers=out_layers,
        swiglu="pretrained.blocks.0.mlp.w12.weight" in sd,
        neck=[int(sd[f"depth_head.projects.{i}.weight"].shape[0]) for i in range(4)],
        features=int(sd["depth_head.scratch.layer1_rn.weight"].shape[0]),
        head_hidden=int(sd["depth_head.scratch.output_conv2.0.weight"].shape[0]),
    )


def _block_renames(i):
    src, dst = f"pretrained.blocks.{i}.", f"backbone.encoder.layer.{i}."
    pairs = [("ls1.gamma", "layer_scale1.lambda1"), ("ls2.gamma", "layer_scale2.lambda1"),
             ("attn.proj", "attention.output.dense")]
    pairs += [(n, n) for n in ("norm1", "norm2", "mlp.fc1", "mlp.fc2")]
    pairs += [("mlp.w12", "mlp.weights_in"), ("mlp.w3", "mlp.weights_out")]  # ViT-g SwiGLU
    return [(src + a, dst + b) for a, b in pairs]


def _head_renames():
    pairs = [("pretrained.cls_token", "backbone.embeddings.cls_token"),
             ("pretrained.mask_token", "backbone.embeddings.mask_token"),
             ("pretrained.pos_embed", "backbone.embeddings.position_embeddings"),
             ("pretrained.patch_embed.proj", "backbone.embeddings.patch_embeddings.projection"),
             ("pretrained.norm", "backbone.layernorm"),
             ("depth_head.scratch.output_conv1", "head.conv1"),
             ("depth_head.scratch.output_conv2.0", "head.conv2"),
             ("depth_head.scratch.output_conv2.2", "head.conv3")]
    for i in range(4):
        pairs.append((f"depth_head.projects.{i}", f"neck.reassemble_stage.layers.{i}.projection"))
        pairs.append((f"depth_head.resize_layers.{i}", f"neck.reassemble_stage.layers.{i}.resize"))
        pairs.append((f"depth_head.scratch.layer{i + 1}_rn", f"neck.convs.{i}"))
    for n, j in ((1, 3), (2, 2), (3, 1), (4, 0)):  # refinenet n → fusion layer j
        src, dst = f"depth_head.scratch.refinenet{n}.", f"neck.fusion_stage.layers.{j}."
        pairs.append((src + "out_conv", dst + "projection"))
        for u in (1, 2):
            for cv in (1, 2):
                pairs.append((f"{src}resConfUnit{u}.conv{cv}", f"{dst}residual_layer{u}.convolution{cv}"))
    return pairs


def rename_state_dict(sd, dims):
    """Official DA2 keys → HF DepthAnythingForDepthEstimation keys (fused qkv split). Raises on leftovers."""
    prefixes = _head_renames()
    for i in range(dims["depth"]):
        prefixes += _block_renames(i)
    out, left = {}, dict(sd)
    c = dims["embed_dim"]
    for i in range(dims["depth"]):
        for part in ("weight", "bias"):
            qkv = left.pop(f"pretrained.blocks.{i}.attn.qkv.{part}")
            for k, name in enumerate(("query", "key", "value")):
                out[f"backbone.encoder.layer.{i}.attention.attention.{name}.{part}"] = qkv[k * c:(k + 1) * c]
    for key in list(left):
        for src, dst in prefixes:
            if key == src or key.startswith(src + "."):
                out[dst + key[len(src):]] = left.pop(key)
                break
    if left:
        raise SystemExit(f"unmapped checkpoint keys: {sorted(left)[:10]}")
    return out


def official_pos_embed(torch, pos, height, width, patch=14, offset=0.1):
    """DINOv2 (DA2/DA3) interpolate_pos_encoding: bicubic with scale_factor ((gh+offset)/M, (gw+offset)/M)."""
    f = torch.nn.functional
    gh, gw = height // patch, width // patch
    n = pos.shape[1] - 1
    m = int(math.sqrt(n))
    if gh * gw == n and gh == gw:
        return pos
    dim = pos.shape[-1]
    grid = pos[:, 1:].reshape(1, m, m, dim).permute(0, 3, 1, 2).float()
    grid = f.interpolate(grid, scale_factor=((gh + offset) / m, (gw + offset) / m), mode="bicubic",
                         align_corners=False)
    assert grid.shape[-2:] == (gh, gw), (grid.shape, gh, gw)
    grid = grid.to(pos.dtype).permute(0, 2, 3, 1).reshape(1, -1, dim)
    return torch.cat([pos[:, :1], grid], dim=1)


# ---- the transformers side ----------------------------------------------------------------------------------------

def _config_number(v):
    """transformers 5 validates config fields strictly (max_depth: int | None): pass 20.0 as 20."""
    return int(v) if float(v).is_integer() else float(v)


def build_hf_model(dims, metric, max_depth):
    from transformers import DepthAnythingConfig, DepthAnythingForDepthEstimation
    backbone = dict(model_type="dinov2", hidden_size=dims["embed_dim"], num_hidden_layers=dims["depth"],
                    num_attention_heads=dims["num_heads"], patch_size=14, image_size=518, mlp_ratio=4,
                    layerscale_value=1.0, layer_norm_eps=1e-6, use_swiglu_ffn=dims["swiglu"],
                    out_indices=[i + 1 for i in dims["out_layers"]], apply_layernorm=True,
                    reshape_hidden_states=False)
    cfg = DepthAnythingConfig(backbone_config=backbone, reassemble_hidden_size=dims["embed_dim"], patch_size=14,
                              reassemble_factors=[4, 2, 1, 0.5], neck_hidden_sizes=dims["neck"],
                              fusion_hidden_size=dims["features"], head_hidden_size=dims["head_hidden"],
                              depth_estimation_type="metric" if metric else "relative",
                              max_depth=_config_number(max_depth) if metric else None)
    return DepthAnythingForDepthEstimation(cfg).eval()


def load_weights(model, hf_sd):
    missing, unexpected = model.load_state_dict(hf_sd, strict=False)
    if missing or unexpected:
        raise SystemExit(f"weights do not fit the HF model: missing {missing[:8]}, unexpected {unexpected[:8]}")


def make_processor(input_size):
    import transformers
    kwargs = dict(do_resize=True, size={"height": input_size, "width": input_size}, keep_aspect_ratio=True,
                  ensure_multiple_of=14, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
                  image_mean=IMAGENET_MEAN, image_std=IMAGENET_STD, do_pad=False)
    for name in ("DPTImageProcessor", "DPTImageProcessorFast"):  # the PIL one (§2c) first
        cls = getattr(transformers, name, None)
        if cls is not None:
            try:
                return cls(resample=3, **kwargs), name  # 3 = PIL BICUBIC
            except (TypeError, ValueError, ImportError):
                continue
    raise SystemExit("transformers has no usable DPTImageProcessor")


def rel_l2(a, b):
    import numpy as np
    a, b = np.asarray(a, np.float64).squeeze(), np.asarray(b, np.float64).squeeze()
    if a.shape != b.shape:
        return None
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def summarise(name, got, want):
    import numpy as np
    got, want = np.asarray(got).squeeze(), np.asarray(want).squeeze()
    r = dict(shape_hf=list(got.shape), shape_official=list(want.shape), rel_l2=rel_l2(got, want))
    if r["rel_l2"] is not None:
        r["max_abs"] = float(np.abs(got.astype(np.float64) - want).max())
    print(f"{name:28s} rel_l2 {r['rel_l2']!s:24s} HF {tuple(got.shape)} vs official {tuple(want.shape)}", flush=True)
    return r


def find_checkpoint(ref_dir, given):
    if given:
        return given
    pths = sorted(p for p in os.listdir(ref_dir) if p.endswith(".pth"))
    if len(pths) != 1:
        raise SystemExit(f"{ref_dir}: expected one .pth, found {pths}; pass --checkpoint")
    return os.path.join(ref_dir, pths[0])


def run(args):
    import numpy as np
    import torch
    from PIL import Image
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ckpt = find_checkpoint(args.ref_dir, args.checkpoint)
    sd = torch.load(ckpt, map_location="cpu")
    dims = infer_dims(sd)
    base = os.path.basename(ckpt).lower()
    metric = "metric" in base
    max_depth = args.max_depth or (80.0 if "vkitti" in base else 20.0)
    model = build_hf_model(dims, metric, max_depth)
    load_weights(model, rename_state_dict(sd, dims))
    model = model.to(args.device)
    x = np.load(os.path.join(args.ref_dir, "input.npy"))
    depth_ref = np.load(os.path.join(args.ref_dir, "depth.npy"))
    full_ref = np.load(os.path.join(args.ref_dir, "depth_full.npy"))
    input_size = args.input_size or int(min(x.shape[-2:]))  # official lower_bound: shorter side = input_size
    report = dict(checkpoint=ckpt, dims=dims, metric=metric, max_depth=max_depth if metric else None,
                  input_size=input_size, device=args.device)
    import transformers
    report["versions"] = dict(torch=torch.__version__, transformers=transformers.__version__)
    with torch.no_grad():
        image = Image.open(args.image).convert("RGB")
        proc, proc_name = make_processor(input_size)
        pix = proc(images=image, return_tensors="pt")["pixel_values"].to(args.device)
        out = model(pixel_values=pix)
        post = proc.post_process_depth_estimation(out, target_sizes=[(image.height, image.width)])
        full_hf = post[0]["predicted_depth"].float().cpu().numpy()
        report["processor"] = proc_name
        report["hf_input_shape"] = list(pix.shape)
        report["hf_pipeline"] = summarise("(a) HF pipeline", full_hf, full_ref)
        xt = torch.from_numpy(x).to(args.device)
        raw = model(pixel_values=xt).predicted_depth.float().cpu().numpy()
        report["hf_forward"] = summarise("(b) HF forward, official in", raw, depth_ref)
        emb = model.backbone.embeddings
        emb.interpolate_pos_encoding = lambda e, h, w: official_pos_embed(torch, emb.position_embeddings, h, w)
        raw_off = model(pixel_values=xt).predicted_depth.float().cpu().numpy()
        report["hf_forward_official_pos"] = summarise("(c) + official pos-embed", raw_off, depth_ref)
    out_dir = os.environ.get("OUT")
    if out_dir:
        path = os.path.join(out_dir, "hf_crosscheck.json")
        with open(path, "w") as f:
            json.dump(report, f, indent=1)
        print("wrote", path)
    return 0


# ---- self-test (torch + numpy, no transformers) -------------------------------------------------------------------

def self_test():
    import torch
    ckpt = os.path.join(REPO, "tests", "fixtures", "models", "da2_tiny_rel", "da2_tiny_rel.pth")
    sd = torch.load(ckpt, map_location="cpu")
    dims = infer_dims(sd)
    assert dims["embed_dim"] == 64 and dims["depth"] == 12 and dims["num_heads"] == 1, dims
    assert dims["neck"] == [8, 16, 32, 32] and dims["features"] == 16 and dims["head_hidden"] == 32, dims
    hf = rename_state_dict(sd, dims)
    assert not any(k.startswith(("pretrained.", "depth_head.")) for k in hf)
    n_qkv = sum(1 for k in sd if ".attn.qkv." in k)
    assert len(hf) == len(sd) + 2 * n_qkv, (len(hf), len(sd), n_qkv)
    q = hf["backbone.encoder.layer.3.attention.attention.key.weight"]
    assert torch.equal(q, sd["pretrained.blocks.3.attn.qkv.weight"][64:128])
    assert torch.equal(hf["neck.fusion_stage.layers.0.projection.weight"],
                       sd["depth_head.scratch.refinenet4.out_conv.weight"])
    assert "neck.reassemble_stage.layers.2.resize.weight" not in hf  # factor 1: identity, no weights
    pos = sd["pretrained.pos_embed"]
    assert official_pos_embed(torch, pos, 518, 518) is pos
    p = official_pos_embed(torch, pos, 140, 182)
    assert p.shape == (1, 1 + 10 * 13, 64), p.shape
    naive = torch.nn.functional.interpolate(pos[:, 1:].reshape(1, 37, 37, 64).permute(0, 3, 1, 2), size=(10, 13),
                                            mode="bicubic", align_corners=False)
    naive = naive.permute(0, 2, 3, 1).reshape(1, -1, 64)
    gap = float((p[:, 1:] - naive).norm() / naive.norm())
    assert gap > 1e-4, gap  # the two rules really differ on this grid
    print(f"self-test ok: {len(hf)} HF tensors, pos-embed rule gap (official vs size=) {gap:.3e}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ref_dir", nargs="?", help="directory with the .pth, input.npy, depth.npy, depth_full.npy")
    ap.add_argument("--checkpoint", help="the official .pth (default: the only .pth in ref_dir)")
    ap.add_argument("--image", default=os.path.join(REPO, "tests", "fixtures", "models", "input.png"))
    ap.add_argument("--input-size", type=int, default=0, help="official input_size (default: min side of input.npy)")
    ap.add_argument("--max-depth", type=float, default=0, help="metric: 20 Hypersim / 80 VKITTI (default: by name)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.ref_dir:
        ap.error("ref_dir is required")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
