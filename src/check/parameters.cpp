// Parameters are bound by name for the whole spec, nested graphs included, so
// a name must mean one type everywhere and every declared name needs exactly
// one binding.
#include <string>
#include <unordered_map>
#include <variant>

#include "check_passes.hpp"
#include "cudag/check.hpp"

namespace cudag::check_detail {
namespace {

struct first_declaration {
  const param_decl* decl;
  std::size_t frame;
};

// Declarations in pre-order, first one per name; the order of the names is
// the order of their first declaration, so reports are deterministic.
std::vector<first_declaration> first_declarations(const spec_tree& tree) {
  std::vector<first_declaration> result;
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t f = 0; f < tree.size(); ++f) {
    for (const param_decl& p : tree.at(f).spec().params) {
      if (seen.emplace(p.name, result.size()).second) result.push_back({&p, f});
    }
  }
  return result;
}

// Nodes whose values or grid rule read parameter `name`, for messages.
std::vector<std::string> users_of(const spec_tree& tree, const std::string& name) {
  std::vector<std::string> users;
  for (std::size_t f = 0; f < tree.size(); ++f) {
    const auto& nodes = tree.at(f).spec().nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      bool uses = false;
      for_each_value(nodes[i], [&](const value& v) {
        if (const auto* p = std::get_if<param_ref>(&v.source); p && p->name == name) uses = true;
      });
      if (const auto* k = std::get_if<kernel_node>(&nodes[i].params)) {
        if (k->grid_from && k->grid_from->param == name) uses = true;
        for (const shape_rule& r : k->shape_rules) uses |= r.param == name;
      }
      if (uses) users.push_back(tree.at(f).view.path(i));
    }
  }
  return users;
}

std::string used_by_phrase(const std::vector<std::string>& users) {
  if (users.empty()) return "";
  std::string text = " (used by '" + users.front() + "'";
  if (users.size() > 1) text += " and " + std::to_string(users.size() - 1) + " more";
  return text + ")";
}

}  // namespace

void check_parameter_declarations(const spec_tree& tree) {
  std::unordered_map<std::string_view, first_declaration> first;
  for (std::size_t f = 0; f < tree.size(); ++f) {
    for (const param_decl& p : tree.at(f).spec().params) {
      auto [it, inserted] = first.emplace(p.name, first_declaration{&p, f});
      if (!inserted && !(it->second.decl->type == p.type)) {
        throw check_error("parameter '" + p.name + "' is declared as " +
                              it->second.decl->type.name() + " in " +
                              tree.at(it->second.frame).view.description() + " and as " +
                              p.type.name() + " in " + tree.at(f).view.description() +
                              "; parameters are bound by name, so one value cannot fit both",
                          {});
      }
    }
  }
}

void check_bindings(const spec_tree& tree, std::span<const binding> bindings) {
  const std::vector<first_declaration> declared = first_declarations(tree);
  std::unordered_map<std::string_view, std::size_t> declared_index;
  for (std::size_t i = 0; i < declared.size(); ++i) declared_index.emplace(declared[i].decl->name, i);

  std::vector<const binding*> bound(declared.size(), nullptr);
  for (const binding& b : bindings) {
    auto it = declared_index.find(b.name);
    if (it == declared_index.end()) {
      throw check_error("a binding names parameter '" + b.name +
                            "', which no graph of the spec declares",
                        {});
    }
    const first_declaration& d = declared[it->second];
    if (bound[it->second]) {
      throw check_error("parameter '" + b.name + "' is bound twice", users_of(tree, b.name));
    }
    if (!binds_to(b.type, d.decl->type)) {
      auto users = users_of(tree, b.name);
      std::string message = "parameter '" + b.name + "' is declared as " + d.decl->type.name() +
                            " in " + tree.at(d.frame).view.description() +
                            " but bound to a value of type " + b.type.name() +
                            used_by_phrase(users);
      throw check_error(std::move(message), std::move(users));
    }
    bound[it->second] = &b;
  }

  for (std::size_t i = 0; i < declared.size(); ++i) {
    if (bound[i]) continue;
    const first_declaration& d = declared[i];
    auto users = users_of(tree, d.decl->name);
    std::string message = "parameter '" + d.decl->name + "' (" + d.decl->type.name() +
                          ", declared in " + tree.at(d.frame).view.description() +
                          ") is not bound" + used_by_phrase(users);
    throw check_error(std::move(message), std::move(users));
  }
}

}  // namespace cudag::check_detail
