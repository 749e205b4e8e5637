#include "cudag/check.hpp"

namespace cudag {

check_error::check_error(std::string message, std::vector<std::string> nodes)
    : error(message, cudaSuccess, {}, nodes.empty() ? std::string{} : nodes.front()),
      nodes_(std::move(nodes)) {}

}  // namespace cudag
