// dacpp convert SRC -o OUT.gguf — official checkpoint (DA2 .pth, DA2 -hf folder, DA3 folder) → GGUF in the
// depth-anything.cpp layout, without Python.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/error.h"
#include "formats/import.h"

namespace dacpp::cli {
namespace {

struct ConvertOptions {
  std::string source;
  std::string output;
  ImportOptions import;
};

}  // namespace

Command register_convert(CLI::App& app) {
  auto opt = std::make_shared<ConvertOptions>();
  CLI::App* sub = app.add_subcommand("convert", "Convert an official checkpoint to GGUF");
  sub->add_option("source", opt->source, "DA2 .pth, DA2 -hf folder, or DA3 folder (model.safetensors+config.json)")
      ->required();
  sub->add_option("-o,--output", opt->output, "Output .gguf path")->required();
  sub->add_option("--max-depth", opt->import.max_depth,
                  "DA2 metric: output scale in metres (20 Hypersim, 80 VKITTI); default from the file name");
  sub->add_option("--name", opt->import.name, "checkpoint_name written to the file (default: source name)");
  sub->add_flag("--with-aux", opt->import.with_aux, "DA3 any-view: keep the ray (aux) head");
  sub->add_flag("--nested-metric", opt->import.nested_metric,
                "DA3 nested: write the metric branch (default: the any-view branch; depth-anything.cpp's two-file "
                "layout, loaded together with `depth -m ANYVIEW.gguf --metric-model METRIC.gguf`)");
  return {sub, [opt]() {
            DACPP_CHECK(opt->import.max_depth >= 0, ErrorCode::InvalidArgument, "--max-depth must be >= 0, got ",
                        opt->import.max_depth);
            // A GGUF holds one network of a nested checkpoint (depth-anything.cpp's layout): never both.
            opt->import.nested_part = opt->import.nested_metric ? ImportOptions::NestedPart::Metric
                                                                : ImportOptions::NestedPart::AnyView;
            std::shared_ptr<const ModelFile> m = import_checkpoint(opt->source, opt->import);
            write_gguf(*m, opt->output);
            std::fprintf(stderr, "dacpp: wrote %s (%zu tensors)\n", opt->output.c_str(), m->records().size());
            return 0;
          }};
}

}  // namespace dacpp::cli
