#include "resource_commands.h"

#include <httplib.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "command_common.h"

namespace trainyard::cli {
namespace {

using nlohmann::json;

std::string Parent(const CliResource& r, const CommonFlags& c) {
  if (!r.project_parent) return ParentName(c);
  const std::string parent = ParentName(c);  // projects/P/locations/L
  return parent.substr(0, parent.find("/locations/"));
}

std::string Name(const CliResource& r, const CommonFlags& c, const std::string& ref) {
  if (ref.starts_with("projects/")) return ref;
  return Parent(r, c) + "/" + r.collection + "/" + ref;
}

StatusOr<std::unique_ptr<ApiClient>> Connect(const CliResource& r, const CommonFlags& c) {
  TY_RETURN_IF_ERROR(CheckFormat(c.format, r.formats));
  return ApiClient::Connect(ResolveEndpoint(c.endpoint));
}

Status Print(const CliResource& r, const std::vector<json>& items, const std::string& format,
             bool as_list) {
  TY_ASSIGN_OR_RETURN(std::string text, FormatResources(items, format, as_list, r.formats));
  std::cout << text << std::flush;
  return Status::Ok();
}

void AddDescribe(CLI::App* group, const CliResource& r, int* exit_code) {
  const char* article =
      std::string("AEIOU").find(r.noun.substr(0, 1)) != std::string::npos ? "an " : "a ";
  auto* cmd = group->add_subcommand("describe", "Show " + (article + r.noun));
  auto c = std::make_shared<CommonFlags>();
  auto ref = std::make_shared<std::string>();
  AddCommonFlags(cmd, c.get(), r.describe_format);
  cmd->add_option("ID", *ref, "Id or full resource name")->required();
  cmd->callback(Command(r.command + ".describe", exit_code, [r, c, ref]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, Connect(r, *c));
    TY_ASSIGN_OR_RETURN(json item, client->Call("GET", "/v1/" + Name(r, *c, *ref)));
    return Print(r, {item}, c->format, false);
  }));
}

struct ListFlags {
  std::string filter;
  int limit = 0;
  int page_size = 0;
  std::string sort_by;
  bool uri = false;
};

// Every page of the list (up to `limit` items when set).
StatusOr<std::vector<json>> FetchAll(ApiClient& client, const CliResource& r, const CommonFlags& c,
                                     const ListFlags& l) {
  const std::string key = r.list_key.empty() ? r.collection : r.list_key;
  std::vector<json> all;
  std::string token;
  do {
    std::string path = "/v1/" + Parent(r, c) + "/" + r.collection +
                       "?pageSize=" + std::to_string(l.page_size ? l.page_size : 100);
    if (!l.filter.empty()) path += "&filter=" + httplib::detail::encode_query_param(l.filter);
    if (!token.empty()) path += "&pageToken=" + httplib::detail::encode_query_param(token);
    TY_ASSIGN_OR_RETURN(json page, client.Call("GET", path));
    for (auto& item : page.value(key, json::array())) all.push_back(item);
    token = page.value("nextPageToken", "");
  } while (!token.empty() && (l.limit == 0 || static_cast<int>(all.size()) < l.limit));
  return all;
}

Status SortBy(const std::string& sort_by, std::vector<json>* items) {
  if (sort_by.empty()) return Status::Ok();
  const bool desc = sort_by[0] == '~';
  const std::string key = desc ? sort_by.substr(1) : sort_by;
  if (key != "displayName" && key != "state" && key != "createTime" && key != "name") {
    return InvalidArgumentError("--sort-by: '" + key +
                                "' is not one of displayName, state, createTime, name");
  }
  std::stable_sort(items->begin(), items->end(), [&](const json& a, const json& b) {
    return desc ? a.value(key, "") > b.value(key, "") : a.value(key, "") < b.value(key, "");
  });
  return Status::Ok();
}

void AddList(CLI::App* group, const CliResource& r, int* exit_code) {
  auto* cmd = group->add_subcommand("list", "List " + r.noun + "s, newest first");
  auto c = std::make_shared<CommonFlags>();
  auto l = std::make_shared<ListFlags>();
  AddCommonFlags(cmd, c.get(), r.list_format);
  cmd->add_option("--filter", l->filter,
                  "Server-side filter, e.g. state=\"JOB_STATE_RUNNING\" AND labels.team=nlp");
  cmd->add_option("--limit", l->limit, "Maximum number to list")->check(CLI::NonNegativeNumber);
  cmd->add_option("--page-size", l->page_size, "Fetched per request")->check(CLI::Range(1, 1000));
  cmd->add_option("--sort-by", l->sort_by,
                  "Field to sort by (displayName, state, createTime, name); prefix ~ for "
                  "descending");
  cmd->add_flag("--uri", l->uri, "Print only the resource names");
  cmd->callback(Command(r.command + ".list", exit_code, [r, c, l]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, Connect(r, *c));
    TY_ASSIGN_OR_RETURN(std::vector<json> all, FetchAll(*client, r, *c, *l));
    TY_RETURN_IF_ERROR(SortBy(l->sort_by, &all));
    if (l->limit > 0 && static_cast<int>(all.size()) > l->limit) all.resize(l->limit);
    if (l->uri) {
      for (const auto& j : all) std::cout << j.value("name", "") << "\n";
      std::cout << std::flush;
      return Status::Ok();
    }
    if (all.empty() && c->format.starts_with("table")) {
      std::cerr << "Listed 0 items.\n";
      return Status::Ok();
    }
    return Print(r, all, c->format, true);
  }));
}

// cancel and delete: a request on one resource, then a sentence on stderr.
void AddAction(CLI::App* group, const CliResource& r, int* exit_code, const std::string& verb) {
  const bool cancel = verb == "cancel";
  auto* cmd = group->add_subcommand(verb, cancel                  ? "Cancel a running " + r.noun
                                          : r.delete_help.empty() ? "Delete an ended " + r.noun
                                                                  : r.delete_help);
  auto c = std::make_shared<CommonFlags>();
  auto ref = std::make_shared<std::string>();
  AddCommonFlags(cmd, c.get(), "");
  cmd->add_option("ID", *ref, "Id or full resource name")->required();
  cmd->callback(Command(r.command + "." + verb, exit_code, [r, c, ref, cancel]() -> Status {
    TY_ASSIGN_OR_RETURN(auto client, Connect(r, *c));
    const std::string name = Name(r, *c, *ref);
    if (cancel) {
      TY_RETURN_IF_ERROR(client->Call("POST", "/v1/" + name + ":cancel", "{}").status());
      std::cerr << (r.cancel_message
                        ? r.cancel_message(name)
                        : "Request to cancel " + r.noun + " [" + name + "] has been sent.\n");
    } else {
      TY_RETURN_IF_ERROR(client->Call("DELETE", "/v1/" + name).status());
      std::cerr << (r.delete_message ? r.delete_message(name)
                                     : "Deleted " + r.noun + " [" + name + "].\n");
    }
    return Status::Ok();
  }));
}

}  // namespace

void RegisterResourceVerbs(CLI::App* group, const CliResource& r, unsigned verbs, int* exit_code) {
  if (verbs & kDescribe) AddDescribe(group, r, exit_code);
  if (verbs & kList) AddList(group, r, exit_code);
  if (verbs & kCancel) AddAction(group, r, exit_code, "cancel");
  if (verbs & kDelete) AddAction(group, r, exit_code, "delete");
}

}  // namespace trainyard::cli
