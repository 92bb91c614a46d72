// Tests for `met bench`: the report's shape (times are reported, never asserted).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/cpu_features.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

TEST(MetBench, JsonReportsPrefillAndEachBatchAndContext) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " bench " + shell_quote(path) +
                       " --prompt-tokens 32 --gen-tokens 4 --batch 1,3 --context 0,40 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["prefill_tok_s"].get<double>(), 0.0);
  ASSERT_EQ(j["decode"].size(), 4u);
  EXPECT_EQ(j["decode"][0]["batch"], 1);
  EXPECT_EQ(j["decode"][1]["batch"], 3);
  EXPECT_EQ(j["decode"][3]["context"], 40);
  EXPECT_GT(j["decode"][3]["tok_s"].get<double>(), 0.0);
  EXPECT_GT(j["weight_bytes"].get<int64_t>(), 1000000);
  EXPECT_GT(j["kv_bytes"].get<int64_t>(), 0);
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
  EXPECT_GT(j["decode_ceiling_tok_s"].get<double>(), 0.0);
  EXPECT_LT(j["decode_step_bytes"].get<double>(), j["weight_bytes"].get<double>());
}

// --phases: each decode figure's steps (and the prefill's) phase by phase,
// each named by the line of the barrier that ends it; the matmuls of
// linear() by its caller's.
TEST(MetBench, PhasesShowWhereEachFiguresStepsGo) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " bench " + shell_quote(path) +
                       " --prompt-tokens 16 --gen-tokens 4 --batch 1,2 --context 0 --threads 2 --phases --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["decode"].size(), 2u);
  for (const auto& d : j["decode"]) {
    const auto& p = d["phases"];
    EXPECT_EQ(p["steps"], 4);
    double sum = 0.0;
    bool attention_qkv = false;
    for (const auto& phase : p["phases"]) {
      sum += phase["seconds_per_step"].get<double>();
      const std::string where = phase["file"].get<std::string>() + " " + phase["function"].get<std::string>();
      attention_qkv = attention_qkv || (where == "model/forward_pass.cc attention_block" &&
                                        phase["calls_per_step"].get<double>() == 5.0);  // its 5 layers
    }
    EXPECT_TRUE(attention_qkv) << p.dump();
    EXPECT_GT(sum, 0.0);
    EXPECT_LE(sum, p["step_seconds"].get<double>() * 1.0001) << p.dump();
  }
  // The prefill figure's steps too: 16 tokens, one step.
  EXPECT_EQ(j["prefill_phases"]["steps"], 1);
  EXPECT_FALSE(j["prefill_phases"]["phases"].empty());
  auto text = run_command(met_binary() + " bench " + shell_quote(path) +
                          " --prompt-tokens 16 --gen-tokens 4 --batch 1 --context 0 --threads 2 --phases");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("phase (the barrier that ends it)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("between jobs"), std::string::npos) << text.out;
  auto spec = run_command(met_binary() + " bench " + shell_quote(path) + " --spec --spec-lookup 2 --phases");
  EXPECT_NE(spec.exit_code, 0);
  EXPECT_NE(spec.err.find("--phases profiles the CPU device's decode figures"), std::string::npos) << spec.err;
}

// The grid device (the CUDA device's program, here on the host backend)
// is measured the same way, with its own bandwidth probe.
TEST(MetBench, DeviceGridHostReportsTheSameFigures) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(model) +
                        " --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --dtype q8_0 --vocab 600")
                .exit_code,
            0);
  auto r = run_command(met_binary() + " bench " + shell_quote(model) +
                       " --device grid-host --prompt-tokens 32 --gen-tokens 4 --batch 1,2 --context 0,40 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"], "grid-host");
  EXPECT_GT(j["prefill_tok_s"].get<double>(), 0.0);
  ASSERT_EQ(j["decode"].size(), 4u);
  EXPECT_GT(j["decode"][3]["tok_s"].get<double>(), 0.0);
  EXPECT_GT(j["memory_read_bytes_s"].get<double>(), 0.0);
  EXPECT_EQ(j["graph_captures"], 0);  // the host backend captures no graphs
  EXPECT_EQ(j["prefill_ceiling_tok_s"].get<double>(), 0.0);  // a CPU compute bound is the CPU device's only
  auto bad = run_command(met_binary() + " bench " + shell_quote(model) + " --device gpu");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--device 'gpu' is not cpu, cuda or grid-host"), std::string::npos) << bad.err;
}

// The prefill figure stands beside its compute bound: a token's matmul MACs
// from the dimensions (per layer q, o 128 x 128, k, v 128 x 64, gate, up,
// down 128 x 256; the output head 128 x 600) over the measured peak of the
// instruction Q8_0's kernels use.
TEST(MetBench, PrefillStandsBesideItsComputeBound) {
  testing::TempDir dir;
  const std::string model = dir.file("m.gguf");
  ASSERT_EQ(run_command(met_binary() + " make-model -o " + shell_quote(model) +
                        " --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --dtype q8_0 --vocab 600")
                .exit_code,
            0);
  const std::string args = " --prompt-tokens 32 --gen-tokens 4 --batch 1 --context 0";
  auto r = run_command(met_binary() + " bench " + shell_quote(model) + args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double macs = 2.0 * (2 * 128 * 128 + 2 * 128 * 64 + 3 * 128 * 256) + 128 * 600;
  EXPECT_EQ(j["prefill_macs_per_token"].get<double>(), macs);
  EXPECT_GT(j["prefill_ceiling_tok_s"].get<double>(), 0.0);
  EXPECT_GT(j["prefill_mac_rate"].get<double>(), 1e8);
  const std::string instruction = j["prefill_instruction"];
  EXPECT_TRUE(instruction == "vpdpbusd" || instruction == "vpmaddubsw") << instruction;
  auto text = run_command(met_binary() + " bench " + shell_quote(model) + args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("MMAC/tok  bound"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("G MAC/s (" + instruction + ")"), std::string::npos) << text.out;
  // Each figure names the kernel tier it ran on, as --isa capped it.
  EXPECT_EQ(j["isa"], isa_name(selected_isa()));
  EXPECT_NE(text.out.find(std::string(", ") + std::string(isa_name(selected_isa())) + " kernels,"), std::string::npos)
      << text.out;
  auto capped = run_command(met_binary() + " --isa avx2 bench " + shell_quote(model) + args + " --json");
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_EQ(nlohmann::json::parse(capped.out)["isa"], "avx2");
  EXPECT_EQ(nlohmann::json::parse(capped.out)["prefill_instruction"], "vpmaddubsw");
}

// Each decode figure stands beside its bytes bound: its step reads the
// weights once and each sequence's KV over its positions, so 40 more
// positions of context add 40 tokens' KV per sequence (three times as much
// at batch 3); its share is tok/s over the bound.
TEST(MetBench, EachDecodeFigureHasItsBytesBound) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " bench " + shell_quote(path) +
                       " --prompt-tokens 8 --gen-tokens 4 --batch 1,3 --context 0,40 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["decode"].size(), 4u);  // (b1, c0), (b3, c0), (b1, c40), (b3, c40)
  auto bytes = [&](int i) { return j["decode"][i]["step_bytes"].get<double>(); };
  EXPECT_GT(bytes(0), j["decode_step_bytes"].get<double>());  // the weights and some KV
  const double kv40 = bytes(2) - bytes(0);
  EXPECT_GT(kv40, 0.0);
  EXPECT_DOUBLE_EQ(bytes(3) - bytes(1), 3 * kv40);
  for (const auto& d : j["decode"]) {
    EXPECT_GT(d["read_bytes_s"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(d["ceiling_tok_s"].get<double>(),
                     d["read_bytes_s"].get<double>() / d["step_bytes"].get<double>() * d["batch"].get<double>());
    EXPECT_DOUBLE_EQ(d["ceiling_share"].get<double>(), d["tok_s"].get<double>() / d["ceiling_tok_s"].get<double>());
  }
}

// The ceiling's bytes are `met info`'s active bytes: for stories260K (dense,
// untied, f32, 512 × 64 embedding) every weight byte but 511 embedding rows,
// as before MoE; for a MoE model, only the k experts a token uses.
TEST(MetBench, TheCeilingDividesByTheBytesOneTokenReads) {
  MET_REQUIRE_SHARED(stories, "models/stories260K.gguf");
  testing::TempDir dir;
  const std::string moe = dir.file("moe.gguf");
  auto made = run_command(met_binary() + " make-model -o " + shell_quote(moe) +
                          " --arch qwen3moe --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 600"
                          " --dtype f32 --experts 8 --experts-used 2 --expert-ff 64 --shared-expert-ff 96");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  for (const std::string& path : {stories, moe}) {
    auto b = run_command(met_binary() + " bench " + shell_quote(path) +
                         " --prompt-tokens 8 --gen-tokens 2 --batch 1 --json");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    auto i = run_command(met_binary() + " info --json " + shell_quote(path));
    ASSERT_EQ(i.exit_code, 0) << i.err;
    const auto bench = nlohmann::json::parse(b.out);
    const auto info = nlohmann::json::parse(i.out);
    EXPECT_EQ(bench["decode_step_bytes"].get<double>(), info["active_bytes"].get<double>()) << path;
    if (path == stories) {
      EXPECT_EQ(bench["decode_step_bytes"].get<double>(), bench["weight_bytes"].get<double>() - 511 * 64 * 4);
    } else {
      EXPECT_LT(info["active_bytes"].get<double>(), bench["weight_bytes"].get<double>());
    }
  }
}

TEST(MetBench, BadBatchIsRefused) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " bench " + shell_quote(path) + " --batch 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--batch 0"), std::string::npos) << r.err;
}

// A tiny random-weight model for the engine benchmark (`extra`: more
// make-model flags).
std::string make_tiny_model(const testing::TempDir& dir, const std::string& extra = "") {
  const std::string model = dir.file("tiny.gguf");
  auto r = run_command(met_binary() + " make-model -o " + shell_quote(model) +
                       " --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --vocab 600 --dtype f32" + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return model;
}

const char kServingArgs[] =
    " --batch 1 --concurrency 1,2 --requests-per-level 2 --prompt-tokens 16 --gen-tokens 4"
    " --cached-prompt-tokens 64 --threads 2";

TEST(MetBench, ConcurrencyPrintsTheServingTable) {
  testing::TempDir dir;
  const std::string model = make_tiny_model(dir);
  auto r = run_command(met_binary() + " bench " + shell_quote(model) + kServingArgs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("decode  batch   1"), std::string::npos) << r.out;  // the device bench still runs
  EXPECT_NE(r.out.find("concurrency requests  out tok/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TTFT p99"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cached prompt 64 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("next turn 192 tokens"), std::string::npos) << r.out;
}

TEST(MetBench, ConcurrencyJsonHasAServingSection) {
  testing::TempDir dir;
  const std::string model = make_tiny_model(dir);
  auto r = run_command(met_binary() + " bench " + shell_quote(model) + kServingArgs + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["prefill_tok_s"].get<double>(), 0.0);  // the device bench's shape is kept
  ASSERT_EQ(j["decode"].size(), 1u);
  const auto& s = j["serving"];
  ASSERT_EQ(s["levels"].size(), 2u) << s;
  for (size_t i = 0; i < 2; ++i) {
    const auto& level = s["levels"][i];
    EXPECT_EQ(level["concurrency"], i + 1);
    EXPECT_EQ(level["requests"], 2);
    EXPECT_EQ(level["output_tokens"], 8);  // ignore_eos: every request runs its 4 tokens
    EXPECT_GT(level["output_tok_s"].get<double>(), 0.0);
    EXPECT_LE(level["ttft_ms_p50"].get<double>(), level["ttft_ms_p99"].get<double>());
    EXPECT_LE(level["itl_ms_p50"].get<double>(), level["itl_ms_p99"].get<double>());
  }
  EXPECT_EQ(s["cached_prompt"]["prompt_tokens"], 64);
  EXPECT_GT(s["cached_prompt"]["cached_prompt_tokens"].get<int>(), 0);  // the second submission hit the cache
  EXPECT_LT(s["cached_prompt"]["cached_prompt_tokens"].get<int>(), 64);
  // The next turn: 64 prompt tokens, 64 out, 64 more; the first turn's
  // blocks (all but the last token's) are cached.
  const auto& turn = s["cached_prompt"]["next_turn"];
  EXPECT_EQ(turn["prompt_tokens"], 192);
  EXPECT_EQ(turn["cached_prompt_tokens"], 112);
  EXPECT_GT(turn["ttft_ms"].get<double>(), 0.0);
  EXPECT_EQ(s["max_seqs"], 64);
  EXPECT_GT(s["kv_blocks"].get<int>(), 0);
}

TEST(MetBench, BadConcurrencyIsRefused) {
  testing::TempDir dir;
  const std::string model = make_tiny_model(dir);
  for (const std::string args : {" --concurrency 0", " --concurrency 2 --requests-per-level -1",
                                 " --concurrency 2 --kv-mem 1G --kv-blocks 9"}) {
    auto r = run_command(met_binary() + " bench " + shell_quote(model) + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.err.rfind("met bench: ", 0), 0u) << args << ": " << r.err;
  }
}

// --spec: four workloads, each with both speeds and its drafts; the model
// drafting for itself is always right, and an exact prediction is accepted
// whole.
TEST(MetBench, SpecReportsEachWorkloadWithAndWithoutSpeculation) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " bench " + shell_quote(path) + " --spec --draft-model " + shell_quote(path) +
                       " --spec-adaptive off --prompt-tokens 16 --gen-tokens 40 --spec-edits 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& w = j["speculation"];
  ASSERT_EQ(w.size(), 4u) << r.out;
  EXPECT_EQ(w[0]["workload"], "free");
  EXPECT_EQ(w[1]["workload"], "predicted");
  EXPECT_EQ(w[2]["workload"], "edited (2)");
  EXPECT_EQ(w[3]["workload"], "quoted");
  EXPECT_TRUE(w[3].contains("quoted_prefix")) << r.out;
  EXPECT_FALSE(w[0].contains("quoted_prefix")) << r.out;
  for (const auto& x : w) {
    EXPECT_EQ(x["output_tokens"], 40);
    EXPECT_GT(x["plain_tok_s"].get<double>(), 0.0);
    EXPECT_GT(x["spec_tok_s"].get<double>(), 0.0);
    EXPECT_GT(x["drafted"].get<int64_t>(), 0);
  }
  EXPECT_EQ(w[0]["accepted"], w[0]["drafted"]) << "the model drafting for itself";
  EXPECT_EQ(w[1]["accepted"], w[1]["drafted"]) << "the exact prediction";
  auto table = run_command(met_binary() + " bench " + shell_quote(path) +
                           " --spec --spec-lookup 3 --prompt-tokens 16 --gen-tokens 20");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("plain tok/s"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("edited (3)"), std::string::npos) << table.out;
}

// A model whose next token follows its last one (its layers scaled down)
// quotes its own earlier output from the prompt, and prompt lookup drafts
// that quote: most of its drafts are accepted, and the output is the plain
// one (run_spec_bench refuses a difference).
TEST(MetBench, PromptLookupDraftsAQuotedPrompt) {
  testing::TempDir dir;
  const std::string model = make_tiny_model(dir, " --branch-scale 0.00001");
  auto r = run_command(met_binary() + " bench " + shell_quote(model) +
                       " --spec --spec-lookup 4 --spec-adaptive off --prompt-tokens 16 --gen-tokens 48 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& quoted = j["speculation"][3];
  ASSERT_EQ(quoted["workload"], "quoted") << r.out;
  EXPECT_EQ(quoted["quoted_prefix"], 48) << "the output is the quoted text: " << r.out;
  EXPECT_GT(quoted["accepted"].get<int64_t>() * 4, quoted["drafted"].get<int64_t>() * 3) << r.out;
  EXPECT_GE(quoted["accepted"].get<int64_t>(), 24) << "most of the output was drafted: " << r.out;
  // Past the context the quoted workload stands aside, saying why; the rest run.
  auto past = run_command(met_binary() + " bench " + shell_quote(model) +
                          " --spec --spec-lookup 4 --prompt-tokens 800 --gen-tokens 300 --json");
  ASSERT_EQ(past.exit_code, 0) << past.err;
  const auto past_json = nlohmann::json::parse(past.out);
  const auto& w = past_json["speculation"];
  ASSERT_EQ(w.size(), 4u) << past.out;
  EXPECT_EQ(w[2]["output_tokens"], 300) << past.out;
  EXPECT_EQ(w[3]["workload"], "quoted");
  EXPECT_NE(w[3]["skipped"].get<std::string>().find("exceed the context"), std::string::npos) << past.out;
}

// Serving with speculation reports what the draft budget did: drafts the
// steps verified, those accepted (all of them where the model drafts for
// itself greedily) and those withheld, in the table and in the JSON.
TEST(MetBench, ConcurrencyWithSpeculationReportsItsDrafts) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const std::string args = " --batch 1 --concurrency 2 --requests-per-level 2 --prompt-tokens 16 --gen-tokens 24"
                           " --cached-prompt-tokens 0 --threads 2 --spec-adaptive off --draft-model " +
                           shell_quote(path);
  auto r = run_command(met_binary() + " bench " + shell_quote(path) + args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = nlohmann::json::parse(r.out)["serving"];
  EXPECT_GT(s["spec_drafted"].get<int64_t>(), 0) << s;
  EXPECT_EQ(s["spec_accepted"], s["spec_drafted"]) << s;
  EXPECT_EQ(s["spec_withheld"], 0) << s;
  auto table = run_command(met_binary() + " bench " + shell_quote(path) + args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("drafts verified"), std::string::npos) << table.out;
  auto plain = run_command(met_binary() + " bench " + shell_quote(path) + kServingArgs);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("drafts verified"), std::string::npos) << "no speculation, no line: " << plain.out;
}

TEST(MetBench, SpeculationWithoutSpecOrConcurrencyIsRefused) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  for (const std::string args : {" --spec-lookup 3", " --draft-model x.gguf", " --spec --spec-repeats 0",
                                 " --spec --gen-tokens 1", " --spec --gen-tokens 8 --spec-edits 9"}) {
    auto r = run_command(met_binary() + " bench " + shell_quote(path) + args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_EQ(r.err.rfind("met bench: ", 0), 0u) << args << ": " << r.err;
  }
}

}  // namespace
}  // namespace met
