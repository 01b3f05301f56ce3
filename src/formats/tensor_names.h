// The one table of names (style.md A8): GGUF metadata keys and tensor names in the depth-anything.cpp layout
// (shared/spec/gguf-compat.md §1.2–1.3). Every other file builds names through these functions; no other file
// spells a GGUF name or key literal.
#pragma once

#include <string>

namespace dacpp::names {

// general.architecture is "depthanything3" for every file, DA2 included; `depthanything3.arch` discriminates.
inline constexpr const char* kGeneralArchitecture = "general.architecture";
inline constexpr const char* kArchitecture = "depthanything3";
inline constexpr const char* kArchDA3 = "depthanything3";
inline constexpr const char* kArchDA2 = "depthanything2";

// "depthanything3." + suffix, e.g. key("vit.embed_dim").
std::string key(const std::string& suffix);
// Nested-metric branch keys: "depthanything3.m_" + suffix, e.g. metric_key("vit.embed_dim").
std::string metric_key(const std::string& suffix);

// ---- backbone: "vit.*" (or "m_vit.*" for the nested metric branch when prefix = "m_vit") ----
// vit(prefix, leaf): "<prefix>.<leaf>"                  e.g. vit("vit", "pos_embed")
// vit_block(prefix, i, leaf): "<prefix>.blk.<i>.<leaf>" e.g. vit_block("vit", 3, "attn_qkv.weight")
std::string vit(const std::string& prefix, const std::string& leaf);
std::string vit_block(const std::string& prefix, int i, const std::string& leaf);

// ---- heads: "head.*" (or "m_head.*") ----
// head(prefix, leaf): "<prefix>.<leaf>"                                e.g. head("head", "proj.0.weight")
// head_rn(prefix, level, aux, leaf): "<prefix>.scratch.rn<level>[_aux].<leaf>"  (level 1..4)
//   e.g. head_rn("head", 2, false, "rc1.c1.weight") → "head.scratch.rn2.rc1.c1.weight"
std::string head(const std::string& prefix, const std::string& leaf);
std::string head_rn(const std::string& prefix, int level, bool aux, const std::string& leaf);

// ---- camera decoder "cam.*" and GS head "gs.*" ----
std::string cam(const std::string& leaf);
std::string gs(const std::string& leaf);

}  // namespace dacpp::names
