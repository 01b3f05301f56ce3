/* dacpp.h: the flat C API of dacpp, the Depth Anything inference engine (design.md §2, docs/errors.md).
 *
 * C89-compatible; no backend type or build flag leaks through it. Link against libdacpp (C++: link with a C++
 * compiler or add the C++ runtime and OpenMP).
 *
 * Usage:
 *
 *   dacpp_model* model = NULL;
 *   dacpp_runner* runner = NULL;
 *   dacpp_result* result = NULL;
 *   dacpp_model_params mp = dacpp_model_default_params();
 *   dacpp_runner_params rp = dacpp_runner_default_params();
 *   dacpp_run_params run = dacpp_run_default_params();
 *   dacpp_depth_view view;
 *   if (dacpp_model_load("model.gguf", &mp, &model) != DACPP_STATUS_OK) {
 *     fprintf(stderr, "%s\n", dacpp_last_error());
 *     return 1;
 *   }
 *   rp.threads = 4;
 *   if (dacpp_runner_create(model, &rp, &runner) != DACPP_STATUS_OK) { ... dacpp_last_error() ... }
 *   dacpp_model_free(model);                      (the runner keeps the weights alive)
 *   if (dacpp_run_file(runner, "photo.jpg", &run, &result) != DACPP_STATUS_OK) {
 *     fprintf(stderr, "%s\n", dacpp_runner_last_error(runner));
 *   } else {
 *     dacpp_result_view(result, &view);           (view.depth.data: view.depth.height rows of width floats)
 *     dacpp_result_free(result);
 *   }
 *   dacpp_runner_free(runner);
 *
 * Errors. Every function that can fail returns a dacpp_status; no exception, abort or signal crosses this API for
 * any input (a bad file, image, size or pointer). A null required pointer is DACPP_STATUS_INVALID_ARGUMENT. On
 * failure every output handle is set to NULL. The message of a failed call is kept:
 *   - for the dacpp_run_* calls, in the runner: dacpp_runner_last_error(runner);
 *   - for calls without a usable runner (loading a model, creating a runner, the model and result queries, and a
 *     null runner), in a per-thread slot: dacpp_last_error(). This slot exists only because a failed load has no
 *     handle to carry its message; it holds text, never state.
 * Both are cleared ("") by the next successful call that reports through them.
 *
 * Threads. A dacpp_model is immutable and may be shared by any number of runners on any threads. A dacpp_runner
 * (its caches, arena and last error) is used by one thread at a time; create one runner per worker thread.
 * A dacpp_result is independent of its runner and owned by the caller until dacpp_result_free.
 */
#ifndef DACPP_H
#define DACPP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One value per dacpp::ErrorCode, in its order, after OK (docs/errors.md). */
typedef enum dacpp_status {
  DACPP_STATUS_OK = 0,
  DACPP_STATUS_INVALID_ARGUMENT = 1, /* a caller value out of range: sizes, limits, pointers, an undecodable image */
  DACPP_STATUS_INVALID_MODEL = 2,    /* a corrupt, incomplete or foreign model file */
  DACPP_STATUS_UNSUPPORTED = 3,      /* a well-formed request this model or build cannot serve */
  DACPP_STATUS_NOT_FOUND = 4,        /* a named file does not exist */
  DACPP_STATUS_OUT_OF_MEMORY = 5,    /* an allocation failed */
  DACPP_STATUS_BACKEND = 6,          /* a compute library or device failed */
  DACPP_STATUS_IO = 7,               /* reading or writing failed */
  DACPP_STATUS_INTERNAL = 8          /* a bug in dacpp */
} dacpp_status;

typedef struct dacpp_model dacpp_model;
typedef struct dacpp_runner dacpp_runner;
typedef struct dacpp_result dacpp_result;

/* "DACPP_STATUS_OK", "DACPP_STATUS_INVALID_ARGUMENT", ...; "DACPP_STATUS_UNKNOWN" for other values. */
const char* dacpp_status_name(dacpp_status status);

/* The message of the last failed call on this thread that had no usable runner handle; "" after a success. */
const char* dacpp_last_error(void);

/* ---- model ---- */

typedef struct dacpp_model_params {
  const char* device;    /* "cpu" (default; NULL or "" mean the same), "cuda", "cuda:N" or "auto"; a build without
                          * CUDA answers UNSUPPORTED for "cuda", a missing GPU BACKEND */
  const char* precision; /* NULL or "" (default): bf16 on a GPU, f32 on the CPU. On a GPU "bf16", "f16" or "f32"
                          * (weights and activations); on the CPU "f32" or "bf16" (linear and conv weights in bf16,
                          * f32 accumulation; UNSUPPORTED where the CPU has no AVX-512), "f16" UNSUPPORTED there */
} dacpp_model_params;

dacpp_model_params dacpp_model_default_params(void);

/* Loads a GGUF model, or imports a checkpoint (.pth, .safetensors, or a checkpoint folder). Every tensor is
 * checked here, so a model that loads can run. params may be NULL (defaults). */
dacpp_status dacpp_model_load(const char* path, const dacpp_model_params* params, dacpp_model** out_model);

/* Releases the caller's reference; runners created from the model keep it alive. NULL is ignored. */
void dacpp_model_free(dacpp_model* model);

typedef struct dacpp_model_info {
  const char* name;    /* the checkpoint name ("" when the file has none); valid while the model lives */
  const char* kind;    /* "DA2", "DA3 mono/metric", "DA3 any-view", "DA3 nested" */
  int metric;          /* 1: depth in metres (or focal-normalised for DA3 metric) */
  int has_sky;         /* 1: results carry a sky map */
  int has_confidence;  /* 1: results carry a confidence map */
  int default_size;    /* the processing size used when dacpp_run_params.size is 0 */
  int patch_size;      /* processed sides are multiples of it */
  const char* device;  /* where the weights live and runners compute: "cpu" or "cuda:N" */
  const char* precision; /* the weights' dtype the model was loaded in: "f32", "bf16" or "f16" */
} dacpp_model_info;

dacpp_status dacpp_model_get_info(const dacpp_model* model, dacpp_model_info* out_info);

/* ---- runner ---- */

/* Resource bounds; an input over one is refused up front with DACPP_STATUS_INVALID_ARGUMENT (docs/errors.md). */
typedef struct dacpp_limits {
  size_t max_pixels;         /* image width*height: header-declared (before decoding), decoded, or raw RGB */
  size_t max_image_bytes;    /* encoded image size: a file or a buffer */
  int max_process_size;      /* dacpp_run_params.size */
  size_t max_process_pixels; /* network input height*width after preprocessing */
  int max_views;             /* images in one multi-view request */
  size_t max_request_bytes;  /* one request body (servers) */
} dacpp_limits;

typedef struct dacpp_runner_params {
  int threads;                /* CPU threads; <= 0: all hardware threads */
  size_t pos_cache_capacity;  /* interpolated position-embedding tables kept (one per input grid), >= 1 */
  int apply_exif_orientation; /* 1 (default): rotate JPEGs by their EXIF orientation before inference */
  dacpp_limits limits;
} dacpp_runner_params;

dacpp_runner_params dacpp_runner_default_params(void);

/* A runner over `model` (which it keeps alive). params may be NULL (defaults). */
dacpp_status dacpp_runner_create(dacpp_model* model, const dacpp_runner_params* params, dacpp_runner** out_runner);

void dacpp_runner_free(dacpp_runner* runner);

/* The message of this runner's last failed dacpp_run_* call; "" when it succeeded. Never NULL. */
const char* dacpp_runner_last_error(const dacpp_runner* runner);

/* ---- running ---- */

typedef struct dacpp_run_params {
  int size;            /* processing target side; 0: the model's default */
  int resize_to_input; /* DA3: resize outputs back to the image size (DA2 always does) */
  float focal_px;      /* DA3 metric: focal length in pixels of the input image; 0: none */
} dacpp_run_params;

dacpp_run_params dacpp_run_default_params(void);

/* Depth for an image file (JPEG, PNG, BMP, TGA, GIF, PSD, HDR, PIC). params may be NULL (defaults). */
dacpp_status dacpp_run_file(dacpp_runner* runner, const char* path, const dacpp_run_params* params,
                            dacpp_result** out_result);

/* Depth for an encoded image held in memory (`size` bytes at `data`). */
dacpp_status dacpp_run_encoded(dacpp_runner* runner, const void* data, size_t size, const dacpp_run_params* params,
                               dacpp_result** out_result);

/* Depth for raw 8-bit RGB pixels: `height` rows of `width` interleaved R,G,B bytes, each row `row_stride` bytes
 * after the previous (0: tightly packed, width*3). */
dacpp_status dacpp_run_rgb(dacpp_runner* runner, const unsigned char* rgb, int width, int height, size_t row_stride,
                           const dacpp_run_params* params, dacpp_result** out_result);

/* ---- results ---- */

/* A row-major height×width float map; data is NULL (and the sides 0) when the result has no such map. */
typedef struct dacpp_map {
  const float* data;
  int width;
  int height;
} dacpp_map;

typedef struct dacpp_depth_view {
  dacpp_map depth;      /* always present */
  dacpp_map sky;        /* sky score (DA3 mono/metric; >= 0.3 counts as sky) */
  dacpp_map confidence; /* depth confidence (DA3 any-view; > 1, higher is better) */
  const char* units;    /* "relative-disparity", "relative-depth", "metres" or "focal-normalised" */
  int source_width, source_height;       /* the image as given */
  int processed_width, processed_height; /* the network input */
} dacpp_depth_view;

/* Fills *out_view with pointers into `result`, valid until dacpp_result_free(result). */
dacpp_status dacpp_result_view(const dacpp_result* result, dacpp_depth_view* out_view);

void dacpp_result_free(dacpp_result* result);

#ifdef __cplusplus
}
#endif

#endif /* DACPP_H */
