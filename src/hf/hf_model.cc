// open_hf_folder: reads the folder's JSON files into metadata and binds the
// safetensors shards' tensors under their GGUF names.
// Tested by tests/hf/hf_model_test.cc.
#include "hf/hf_model.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hf/hf_config.h"
#include "hf/hf_generation_config.h"
#include "hf/hf_tokenizer.h"
#include "hf/hf_weights.h"
#include "hf/safetensors_file.h"

namespace met {
namespace {

namespace fs = std::filesystem;

// The file's text; nullopt when it does not exist.
Result<std::optional<std::string>> read_optional_text(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<std::string>();
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open() || fs::is_directory(path, ec)) return io_error("{}: cannot be read", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error("{}: cannot be read", path.string());
  return std::optional<std::string>(text.str());
}

Result<std::string> read_text(const fs::path& path, std::string_view what) {
  MET_ASSIGN_OR_RETURN(std::optional<std::string> text, read_optional_text(path));
  if (!text) return not_found("{} is missing ({})", path.string(), what);
  return std::move(*text);
}

// The safetensors files of the folder: the shards the index's weight_map
// names (in first-mention order), else model.safetensors.
Result<std::vector<fs::path>> safetensors_paths(const fs::path& dir) {
  const fs::path index_path = dir / "model.safetensors.index.json";
  MET_ASSIGN_OR_RETURN(std::optional<std::string> index_text, read_optional_text(index_path));
  if (!index_text) {
    std::error_code ec;
    if (!fs::exists(dir / "model.safetensors", ec)) {
      return not_found("{}: no model.safetensors or model.safetensors.index.json", dir.string());
    }
    return std::vector<fs::path>{dir / "model.safetensors"};
  }
  const nlohmann::json index = nlohmann::json::parse(*index_text, nullptr, false);
  if (index.is_discarded() || !index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object()) {
    return data_loss("{}: no 'weight_map' object", index_path.string());
  }
  std::vector<fs::path> paths;
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    if (!file.is_string()) return data_loss("{}: weight_map['{}'] is not a file name", index_path.string(), tensor);
    const fs::path path = dir / file.get<std::string>();
    if (std::find(paths.begin(), paths.end(), path) != paths.end()) continue;
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      return not_found("{} names {} (for '{}'), which is missing", index_path.string(), path.string(), tensor);
    }
    paths.push_back(path);
  }
  if (paths.empty()) return data_loss("{}: weight_map is empty", index_path.string());
  return paths;
}

// A sentence-transformers folder's pooling (modules.json's Pooling module,
// else 1_Pooling/) as {arch}.pooling_type; nothing without one.
Status add_pooling_metadata(const fs::path& dir, const HfConfig& config, GgufMetadata& md) {
  fs::path pooling_dir = dir / "1_Pooling";
  MET_ASSIGN_OR_RETURN(std::optional<std::string> modules, read_optional_text(dir / "modules.json"));
  const nlohmann::json list = modules ? nlohmann::json::parse(*modules, nullptr, false) : nlohmann::json();
  for (const nlohmann::json& m : list.is_array() ? list : nlohmann::json::array()) {
    const bool pooling = m.is_object() && m.value("type", "").ends_with(".Pooling") && m.contains("path") &&
                         m["path"].is_string();
    if (pooling) pooling_dir = dir / m["path"].get<std::string>();
  }
  MET_ASSIGN_OR_RETURN(std::optional<std::string> text, read_optional_text(pooling_dir / "config.json"));
  if (!text) return ok_status();
  Result<Pooling> p = parse_hf_pooling(*text);
  if (!p.ok()) return p.status().with_prefix(pooling_dir.string());
  md.set(config.arch.gguf_arch + ".pooling_type", static_cast<uint32_t>(*p));
  return ok_status();
}

Status add_folder_metadata(const fs::path& dir, const HfConfig& config, GgufMetadata& md) {
  add_hf_config_metadata(config, md);
  MET_RETURN_IF_ERROR(add_pooling_metadata(dir, config, md));
  md.set("general.name", dir.filename().string());
  MET_ASSIGN_OR_RETURN(std::string tokenizer, read_text(dir / "tokenizer.json", "met reads tokenizer.json"));
  MET_ASSIGN_OR_RETURN(std::optional<std::string> tokenizer_config,
                       read_optional_text(dir / "tokenizer_config.json"));
  MET_RETURN_IF_ERROR(add_hf_tokenizer_metadata(tokenizer, tokenizer_config.value_or(""), config.vocab_size, md)
                          .with_prefix(dir.string()));
  MET_ASSIGN_OR_RETURN(std::optional<std::string> jinja, read_optional_text(dir / "chat_template.jinja"));
  if (jinja) md.set("tokenizer.chat_template", *jinja);
  MET_ASSIGN_OR_RETURN(std::optional<std::string> generation, read_optional_text(dir / "generation_config.json"));
  if (generation) MET_RETURN_IF_ERROR(add_hf_generation_metadata(*generation, md).with_prefix(dir.string()));
  return ok_status();
}

}  // namespace

Result<GgufFile> open_hf_folder(const std::string& dir_name) {
  const fs::path dir = fs::path(dir_name).lexically_normal();
  const fs::path named = dir.has_filename() ? dir : dir.parent_path();  // "a/b/" names b
  MET_ASSIGN_OR_RETURN(std::string config_text, read_text(named / "config.json", "a Hugging Face model folder"));
  Result<HfConfig> config = parse_hf_config(config_text);
  if (!config.ok()) return config.status().with_prefix(named.string());
  MET_ASSIGN_OR_RETURN(std::vector<fs::path> paths, safetensors_paths(named));
  std::vector<SafetensorsFile> shards;
  for (const fs::path& path : paths) {
    MET_ASSIGN_OR_RETURN(SafetensorsFile shard, SafetensorsFile::open(path.string()));
    shards.push_back(std::move(shard));
  }
  GgufMetadata md;
  MET_RETURN_IF_ERROR(add_folder_metadata(named, *config, md));
  Result<HfWeights> weights = assemble_hf_weights(*config, std::move(shards));
  if (!weights.ok()) return weights.status().with_prefix(named.string());
  md.set("general.file_type", weights->file_type);
  Result<GgufFile> file =
      GgufFile::assemble(named.string(), std::move(md), std::move(weights->tensors), std::move(weights->backing));
  if (!file.ok()) return file.status().with_prefix(named.string());
  return file;
}

Result<GgufFile> open_model_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return open_hf_folder(path);
  return GgufFile::open(path);
}

}  // namespace met
