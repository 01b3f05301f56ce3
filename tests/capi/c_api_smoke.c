/* Compiled as C89 by the C compiler: proves include/dacpp.h is a C header, and that a C program can load the tiny
 * DA2 fixture, run depth on raw pixels and on a file, read the result and see a clean error. Exit 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dacpp.h"

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "c_api_smoke: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

static int check_view(const dacpp_result* result, int width, int height) {
  dacpp_depth_view view;
  int i, n;
  CHECK(dacpp_result_view(result, &view) == DACPP_STATUS_OK);
  CHECK(view.depth.data != NULL);
  CHECK(view.depth.width == width && view.depth.height == height);
  CHECK(view.source_width == width && view.source_height == height);
  CHECK(view.processed_width % 14 == 0 && view.processed_height % 14 == 0);
  CHECK(strcmp(view.units, "relative-disparity") == 0);
  CHECK(view.sky.data == NULL && view.confidence.data == NULL);
  n = width * height;
  for (i = 0; i < n; ++i) CHECK(view.depth.data[i] == view.depth.data[i]); /* no NaN */
  return 0;
}

int main(void) {
  const char* model_path = DACPP_FIXTURES_DIR "/tiny-da2.gguf";
  const char* image_path = DACPP_FIXTURES_DIR "/images/sample_small.png";
  dacpp_model_params mp = dacpp_model_default_params();
  dacpp_runner_params rp = dacpp_runner_default_params();
  dacpp_run_params run = dacpp_run_default_params();
  dacpp_model* model = NULL;
  dacpp_runner* runner = NULL;
  dacpp_result* result = NULL;
  unsigned char* rgb;
  int i, w = 40, h = 30;

  CHECK(dacpp_model_load("/nonexistent/m.gguf", &mp, &model) == DACPP_STATUS_NOT_FOUND);
  CHECK(model == NULL && strstr(dacpp_last_error(), "/nonexistent/m.gguf") != NULL);
  CHECK(dacpp_model_load(model_path, &mp, &model) == DACPP_STATUS_OK);
  CHECK(model != NULL && dacpp_last_error()[0] == '\0');
  rp.threads = 1;
  CHECK(dacpp_runner_create(model, &rp, &runner) == DACPP_STATUS_OK);
  dacpp_model_free(model); /* the runner keeps it alive */

  rgb = (unsigned char*)malloc((size_t)w * h * 3);
  CHECK(rgb != NULL);
  for (i = 0; i < w * h * 3; ++i) rgb[i] = (unsigned char)(37 * i + 11);
  run.size = 42;
  CHECK(dacpp_run_rgb(runner, rgb, w, h, 0, &run, &result) == DACPP_STATUS_OK);
  if (check_view(result, w, h) != 0) return 1;
  dacpp_result_free(result);
  free(rgb);

  run.size = 5;
  CHECK(dacpp_run_file(runner, image_path, &run, &result) == DACPP_STATUS_INVALID_ARGUMENT);
  CHECK(result == NULL && strstr(dacpp_runner_last_error(runner), "size") != NULL);
  run.size = 28;
  CHECK(dacpp_run_file(runner, image_path, &run, &result) == DACPP_STATUS_OK);
  CHECK(dacpp_runner_last_error(runner)[0] == '\0');
  if (check_view(result, 83, 61) != 0) return 1;
  dacpp_result_free(result);
  dacpp_runner_free(runner);
  printf("c_api_smoke: ok\n");
  return 0;
}
