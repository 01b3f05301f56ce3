#include "formats/tensor_names.h"

namespace dacpp::names {

std::string key(const std::string& suffix) { return std::string(kArchitecture) + "." + suffix; }
std::string metric_key(const std::string& suffix) { return std::string(kArchitecture) + ".m_" + suffix; }

std::string vit(const std::string& prefix, const std::string& leaf) { return prefix + "." + leaf; }
std::string vit_block(const std::string& prefix, int i, const std::string& leaf) {
  return prefix + ".blk." + std::to_string(i) + "." + leaf;
}

std::string head(const std::string& prefix, const std::string& leaf) { return prefix + "." + leaf; }
std::string head_rn(const std::string& prefix, int level, bool aux, const std::string& leaf) {
  return prefix + ".scratch.rn" + std::to_string(level) + (aux ? "_aux." : ".") + leaf;
}

std::string cam(const std::string& leaf) { return "cam." + leaf; }
std::string gs(const std::string& leaf) { return "gs." + leaf; }

}  // namespace dacpp::names
