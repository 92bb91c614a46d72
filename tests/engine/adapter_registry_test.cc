// Tests for adapter_registry.h with a fake loader: load gives names unique
// ids never reused; a taken name, an empty one and the loader's error are
// refused, changing nothing; unload forgets the name at once while a
// request's hold on the adapter keeps it alive; the list keeps load order;
// --lora's NAME=PATH parses.
#include "engine/adapter_registry.h"

#include <gtest/gtest.h>

namespace met {
namespace {

AdapterRegistry registry() {
  return AdapterRegistry([](const std::string& path, const std::string& name)
                             -> Result<std::shared_ptr<const LoraAdapter>> {
    if (path == "bad") return invalid_argument("bad: not a LoRA adapter file");
    auto a = std::make_shared<LoraAdapter>();
    a->name = name;
    return std::shared_ptr<const LoraAdapter>(a);
  });
}

TEST(AdapterRegistry, LoadsFindsListsAndUnloads) {
  AdapterRegistry r = registry();
  ASSERT_TRUE(r.load("a", "a.gguf").ok());
  ASSERT_TRUE(r.load("b", "b.gguf").ok());
  auto a = r.find("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->id, 1u);
  EXPECT_EQ(a->path, "a.gguf");
  EXPECT_EQ(a->adapter->name, "a");
  EXPECT_EQ(r.find("b")->id, 2u);
  EXPECT_FALSE(r.find("c").has_value());
  ASSERT_EQ(r.list().size(), 2u);
  EXPECT_EQ(r.list()[1].name, "b");

  const std::weak_ptr<const LoraAdapter> weak = a->adapter;
  std::shared_ptr<const LoraAdapter> held = a->adapter;  // a request's hold
  a.reset();
  ASSERT_TRUE(r.unload("a").ok());
  EXPECT_FALSE(r.find("a").has_value());
  EXPECT_FALSE(weak.expired()) << "unload dropped an adapter a request holds";
  held.reset();
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(r.unload("a").code(), StatusCode::kNotFound);
  ASSERT_TRUE(r.load("a", "a.gguf").ok());
  EXPECT_EQ(r.find("a")->id, 3u) << "an id was reused";
}

TEST(AdapterRegistry, RefusesTakenAndEmptyNamesAndBadFilesChangingNothing) {
  AdapterRegistry r = registry();
  ASSERT_TRUE(r.load("a", "a.gguf").ok());
  const Status taken = r.load("a", "other.gguf");
  EXPECT_NE(taken.message().find("an adapter named 'a' is loaded already"), std::string::npos);
  EXPECT_EQ(r.find("a")->path, "a.gguf");
  EXPECT_FALSE(r.load("", "x.gguf").ok());
  const Status bad = r.load("b", "bad");
  EXPECT_NE(bad.message().find("not a LoRA adapter file"), std::string::npos);
  EXPECT_EQ(r.list().size(), 1u);
}

TEST(AdapterRegistry, LoraFlagsParse) {
  auto ok = parse_lora_flag("sql=/models/sql.gguf");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->first, "sql");
  EXPECT_EQ(ok->second, "/models/sql.gguf");
  for (const char* bad : {"sql", "=x.gguf", "sql="}) {
    const auto r = parse_lora_flag(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("expected NAME=PATH"), std::string::npos);
  }
}

}  // namespace
}  // namespace met
