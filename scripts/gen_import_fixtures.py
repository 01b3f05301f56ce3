#!/usr/bin/env python3
"""Writes the tiny synthetic checkpoints of the importer tests to tests/fixtures/import/ (< 2 MB in all).

- da2_tiny.pth: a DA2-structured state dict (official keys `pretrained.*`, `depth_head.*`) with tiny widths:
  embed 64 (1 head), depth 12, MLP hidden 64, a 4x4 position grid, features 16, out_channels [8, 16, 32, 32]; f16.
- da2_tiny_hf/: the same weights renamed as transformers' convert_depth_anything_to_hf.py does (q/k/v split),
  as model.safetensors + config.json, so both imports must give identical tensors.
The weights are random (never zero); the tests check structure, names, shapes, metadata and value identity.
The DA3 test checkpoints are derived from da2_tiny.pth by the test itself (tests/formats/import_test.cc), to keep
the fixtures small.

Usage: /usr/bin/python3 scripts/gen_import_fixtures.py [out_dir]
"""
import collections
import json
import os
import struct
import sys

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "import")
E, DEPTH, HID, GRID, F, OC = 64, 12, 64, 4, 16, [8, 16, 32, 32]
GEN = torch.Generator().manual_seed(7)


def rnd(*shape):
    return (torch.rand(*shape, generator=GEN) * 0.2 + 0.05) * (torch.randint(0, 2, shape, generator=GEN) * 2 - 1)


def vit(p, camera=False, qk_start=None):
    sd = collections.OrderedDict()
    sd[p + "cls_token"] = rnd(1, 1, E)
    if camera:
        sd[p + "camera_token"] = rnd(1, 2, E)
    sd[p + "pos_embed"] = rnd(1, GRID * GRID + 1, E)
    sd[p + "patch_embed.proj.weight"] = rnd(E, 3, 14, 14)
    sd[p + "patch_embed.proj.bias"] = rnd(E)
    for i in range(DEPTH):
        b = f"{p}blocks.{i}."
        sd[b + "norm1.weight"], sd[b + "norm1.bias"] = rnd(E), rnd(E)
        sd[b + "attn.qkv.weight"], sd[b + "attn.qkv.bias"] = rnd(3 * E, E), rnd(3 * E)
        if qk_start is not None and i >= qk_start:
            for n in ("q_norm", "k_norm"):
                sd[b + f"attn.{n}.weight"], sd[b + f"attn.{n}.bias"] = rnd(64), rnd(64)
        sd[b + "attn.proj.weight"], sd[b + "attn.proj.bias"] = rnd(E, E), rnd(E)
        sd[b + "ls1.gamma"] = rnd(E)
        sd[b + "norm2.weight"], sd[b + "norm2.bias"] = rnd(E), rnd(E)
        sd[b + "mlp.fc1.weight"], sd[b + "mlp.fc1.bias"] = rnd(HID, E), rnd(HID)
        sd[b + "mlp.fc2.weight"], sd[b + "mlp.fc2.bias"] = rnd(E, HID), rnd(E)
        sd[b + "ls2.gamma"] = rnd(E)
    sd[p + "norm.weight"], sd[p + "norm.bias"] = rnd(E), rnd(E)
    return sd


def conv(sd, name, oc, ic, k, bias=True):
    sd[name + ".weight"] = rnd(oc, ic, k, k)
    if bias:
        sd[name + ".bias"] = rnd(oc)


def fusion(sd, p, rc1):
    for u in ((1, 2) if rc1 else (2,)):
        for c in (1, 2):
            conv(sd, f"{p}resConfUnit{u}.conv{c}", F, F, 3)
    conv(sd, p + "out_conv", F, F, 1)


def dpt(p, dim_in, rn4_rc1, out_dim, norm=False, sky=False, aux=False):
    sd = collections.OrderedDict()
    if norm:
        sd[p + "norm.weight"], sd[p + "norm.bias"] = rnd(dim_in), rnd(dim_in)
    for i in range(4):
        conv(sd, f"{p}projects.{i}", OC[i], dim_in, 1)
    conv(sd, p + "resize_layers.0", OC[0], OC[0], 4)
    conv(sd, p + "resize_layers.1", OC[1], OC[1], 2)
    conv(sd, p + "resize_layers.3", OC[3], OC[3], 3)
    for i in range(4):
        conv(sd, f"{p}scratch.layer{i + 1}_rn", F, OC[i], 3, bias=False)
    for i in range(1, 5):
        fusion(sd, f"{p}scratch.refinenet{i}.", rc1=(i < 4 or rn4_rc1))
    conv(sd, p + "scratch.output_conv1", F // 2, F, 3)
    conv(sd, p + "scratch.output_conv2.0", 32, F // 2, 3)
    conv(sd, p + "scratch.output_conv2.2", out_dim, 32, 1)
    if sky:
        conv(sd, p + "scratch.sky_output_conv2.0", 32, F // 2, 3)
        conv(sd, p + "scratch.sky_output_conv2.2", 1, 32, 1)
    if aux:
        for i in range(1, 5):
            fusion(sd, f"{p}scratch.refinenet{i}_aux.", rc1=i < 4)
        chans = [F, F // 2, F, F // 2, F, F // 2]
        for lvl in range(4):
            for k in range(5):
                conv(sd, f"{p}scratch.output_conv1_aux.{lvl}.{k}", chans[k + 1], chans[k], 3)
            conv(sd, f"{p}scratch.output_conv2_aux.{lvl}.0", 32, F // 2, 3)
            sd[f"{p}scratch.output_conv2_aux.{lvl}.2.weight"] = rnd(32)
            sd[f"{p}scratch.output_conv2_aux.{lvl}.2.bias"] = rnd(32)
            conv(sd, f"{p}scratch.output_conv2_aux.{lvl}.5", 7, 32, 1)
    return sd


def hf_rename(sd):
    """DA2 official → transformers keys (convert_depth_anything_to_hf.py), q/k/v split."""
    out = collections.OrderedDict()
    fixed = {"pretrained.cls_token": "backbone.embeddings.cls_token",
             "pretrained.mask_token": "backbone.embeddings.mask_token",
             "pretrained.pos_embed": "backbone.embeddings.position_embeddings",
             "pretrained.patch_embed.proj.weight": "backbone.embeddings.patch_embeddings.projection.weight",
             "pretrained.patch_embed.proj.bias": "backbone.embeddings.patch_embeddings.projection.bias",
             "pretrained.norm.weight": "backbone.layernorm.weight", "pretrained.norm.bias": "backbone.layernorm.bias",
             "depth_head.scratch.output_conv1.weight": "head.conv1.weight",
             "depth_head.scratch.output_conv1.bias": "head.conv1.bias",
             "depth_head.scratch.output_conv2.0.weight": "head.conv2.weight",
             "depth_head.scratch.output_conv2.0.bias": "head.conv2.bias",
             "depth_head.scratch.output_conv2.2.weight": "head.conv3.weight",
             "depth_head.scratch.output_conv2.2.bias": "head.conv3.bias"}
    block_leaf = {"ls1.gamma": "layer_scale1.lambda1", "ls2.gamma": "layer_scale2.lambda1",
                  "attn.proj.weight": "attention.output.dense.weight", "attn.proj.bias": "attention.output.dense.bias"}
    for k, v in sd.items():
        if k in fixed:
            out[fixed[k]] = v
        elif k.startswith("pretrained.blocks."):
            i, leaf = k[len("pretrained.blocks."):].split(".", 1)
            b = f"backbone.encoder.layer.{i}."
            if leaf.startswith("attn.qkv."):
                kind = leaf.rsplit(".", 1)[1]
                for j, n in enumerate(("query", "key", "value")):
                    out[f"{b}attention.attention.{n}.{kind}"] = v[j * E:(j + 1) * E].clone()
            else:
                out[b + block_leaf.get(leaf, leaf)] = v
        elif k.startswith("depth_head.projects."):
            i, leaf = k[len("depth_head.projects."):].split(".", 1)
            out[f"neck.reassemble_stage.layers.{i}.projection.{leaf}"] = v
        elif k.startswith("depth_head.resize_layers."):
            i, leaf = k[len("depth_head.resize_layers."):].split(".", 1)
            out[f"neck.reassemble_stage.layers.{i}.resize.{leaf}"] = v
        elif k.startswith("depth_head.scratch.layer"):
            n = int(k[len("depth_head.scratch.layer")])
            out[f"neck.convs.{n - 1}.weight"] = v
        elif k.startswith("depth_head.scratch.refinenet"):
            n, leaf = k[len("depth_head.scratch.refinenet"):].split(".", 1)
            leaf = (leaf.replace("resConfUnit", "residual_layer").replace(".conv", ".convolution")
                    .replace("out_conv", "projection"))
            out[f"neck.fusion_stage.layers.{4 - int(n)}.{leaf}"] = v
        else:
            raise KeyError(k)
    return out


def save_safetensors(sd, path):
    names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for k, v in sd.items():
        raw = v.contiguous().view(torch.uint8).numpy().tobytes() if v.dtype == torch.bfloat16 else \
            v.contiguous().numpy().tobytes()
        header[k] = {"dtype": names[v.dtype], "shape": list(v.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    os.makedirs(OUT, exist_ok=True)
    da2 = vit("pretrained.")
    da2["pretrained.mask_token"] = rnd(1, E)
    da2.update(dpt("depth_head.", E, rn4_rc1=True, out_dim=1))
    da2 = collections.OrderedDict((k, v.half()) for k, v in da2.items())
    torch.save(da2, os.path.join(OUT, "da2_tiny.pth"))

    hf_dir = os.path.join(OUT, "da2_tiny_hf")
    os.makedirs(hf_dir, exist_ok=True)
    save_safetensors(hf_rename(da2), os.path.join(hf_dir, "model.safetensors"))
    with open(os.path.join(hf_dir, "config.json"), "w") as f:
        json.dump({"model_type": "depth_anything", "depth_estimation_type": "relative", "fusion_hidden_size": F,
                   "neck_hidden_sizes": OC, "reassemble_hidden_size": E, "patch_size": 14}, f, indent=1)


if __name__ == "__main__":
    main()
