// The CLI's cache folder: $DACPP_CACHE, else ~/.cache/dacpp. `dacpp pull` keeps downloads and conversions there,
// and every command keeps the CUDA autotuner's choices there (default_tuning_file).
#pragma once

#include <string>

namespace dacpp::cli {

// The folder; empty when neither DACPP_CACHE nor HOME is set.
std::string cache_dir();

// Unless DACPP_TUNING_FILE is set (empty: no file), points it at <cache_dir>/cuda-tuning.tsv, creating the folder:
// a CUDA run then reuses the choices an earlier run timed (a DA2-L forward's ~1.8 s of tuning at the first image),
// and makes the same ones, so bf16 outputs agree bit for bit across runs. The file is one line per choice, keyed
// by GPU, CUDA / cuBLASLt and dacpp versions (core/choice_file.h); deleting it makes the next run time again.
// Does nothing when there is no cache folder or it cannot be made.
void default_tuning_file();

}  // namespace dacpp::cli
