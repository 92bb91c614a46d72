// Sequence filters: length, first, last, join, list, reverse, sort, unique,
// dictsort, items, batch, sum, min, max, map, select, reject, selectattr,
// rejectattr.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(SequenceFilters, LengthCountsCodePointsItemsAndKeys) {
  testing::expect_renders({
      {R"j({{ 'abc'|length }}{{ [1,2]|count }}{{ {'a':1}|length }}{{ 'héllo'|length }}{{ undefined_name|length }})j", R"j(32150)j"},
  });
}

TEST(SequenceFilters, FirstAndLastPickTheEnds) {
  testing::expect_renders({
      {R"j({{ [1,2,3]|first }}{{ [1,2,3]|last }}{{ 'abc'|first }}{{ 'abc'|last }}[{{ []|first }}]{{ ([]|first) is defined }})j", R"j(13ac[]False)j"},
  });
}

TEST(SequenceFilters, JoinPrintsItemsWithASeparator) {
  testing::expect_renders({
      {R"j({{ [1,2,3]|join }}|{{ [1,2,3]|join(', ') }}|{{ [{'a':'x'},{'a':'y'}]|join(',', attribute='a') }}|{{ ['a', none]|join('-') }})j", R"j(123|1, 2, 3|x,y|a-None)j"},
  });
}

TEST(SequenceFilters, ListAndReverse) {
  testing::expect_renders({
      {R"j({{ 'abc'|list }} {{ {'x': 1}|list }} {{ 'héllo'|reverse }} {{ [1,2,3]|reverse|list }} {{ (1, 2)|list }})j", R"j(['a', 'b', 'c'] ['x'] olléh [3, 2, 1] [1, 2])j"},
  });
}

TEST(SequenceFilters, SortIsCaseInsensitiveAndStableByDefault) {
  testing::expect_renders({
      {R"j({{ [3,1,2]|sort }} {{ ['b','A','c']|sort }} {{ ['b','A','c']|sort(case_sensitive=true) }} {{ [3,1,2]|sort(reverse=true) }})j", R"j([1, 2, 3] ['A', 'b', 'c'] ['A', 'b', 'c'] [3, 2, 1])j"},
      {R"j({{ [{'n':2,'k':'a'},{'n':1,'k':'b'},{'n':2,'k':'c'}]|sort(attribute='n')|map(attribute='k')|join }})j", R"j(bac)j"},
  });
}

TEST(SequenceFilters, SortingUnrelatedTypesFails) {
  testing::expect_renders({
      {R"j({{ [1, 'a']|sort }})j", R"j(ERROR: TypeError)j"},
  });
}

TEST(SequenceFilters, UniqueKeepsFirstOccurrences) {
  testing::expect_renders({
      {R"j({{ [1,2,2,3,1]|unique|list }} {{ ['a','A','b']|unique|list }} {{ ['a','A','b']|unique(case_sensitive=true)|list }})j", R"j([1, 2, 3] ['a', 'b'] ['a', 'A', 'b'])j"},
  });
}

TEST(SequenceFilters, DictsortAndItemsGivePairs) {
  testing::expect_renders({
      {R"j({{ {'b':1,'a':2,'C':0}|dictsort }} {{ {'b':1,'a':2}|dictsort(by='value') }} {{ {'b':1,'a':2}|items|list }} {{ undefined_name|items|list }})j", R"j([('a', 2), ('b', 1), ('C', 0)] [('b', 1), ('a', 2)] [('b', 1), ('a', 2)] [])j"},
  });
}

TEST(SequenceFilters, BatchSumMinMax) {
  testing::expect_renders({
      {R"j({{ [1,2,3,4,5]|batch(2)|list }} {{ [1,2,3]|batch(2, 0)|list }} {{ [1,2,3]|sum }} {{ [{'v':1},{'v':2}]|sum(attribute='v') }} {{ [1,2]|sum(start=10) }})j", R"j([[1, 2], [3, 4], [5]] [[1, 2], [3, 0]] 6 3 13)j"},
      {R"j({{ [3,1,2]|min }} {{ [3,1,2]|max }} {{ ['b','A']|min }} {{ [{'v':1},{'v':2}]|max(attribute='v') }} [{{ []|max }}])j", R"j(1 3 A {'v': 2} [])j"},
  });
}

TEST(SequenceFilters, MapAppliesAFilterOrReadsAnAttribute) {
  testing::expect_renders({
      {R"j({{ ['a','b']|map('upper')|join(',') }} {{ [{'n':2},{'n':1}]|map(attribute='n')|list }} {{ [1,2]|map('string')|list }})j", R"j(A,B [2, 1] ['1', '2'])j"},
      {R"j({{ [{'a':{'b':1}},{'a':{'b':2}}]|map(attribute='a.b')|list }} {{ [{'a':1},{}]|map(attribute='a', default=9)|list }} {{ [[1,2]]|map(attribute='0')|list }})j", R"j([1, 2] [1, 9] [1])j"},
      {R"j({{ none|map('upper')|list }} {{ ['x']|map('replace', 'x', 'y')|list }})j", R"j([] ['y'])j"},
  });
}

TEST(SequenceFilters, SelectAndRejectApplyATest) {
  testing::expect_renders({
      {R"j({{ [1,2,3,4]|select('odd')|list }} {{ [1,2,3,4]|reject('odd')|list }} {{ [none, 1, 0, '']|select|list }} {{ [1,5,10]|select('gt', 4)|list }})j", R"j([1, 3] [2, 4] [1] [5, 10])j"},
      {R"j({{ none|select('odd')|list }} {{ []|reject|list }})j", R"j([] [])j"},
  });
}

TEST(SequenceFilters, SelectattrAndRejectattrTestAnAttribute) {
  testing::expect_renders({
      {R"j({{ [{'a':1},{'a':0},{}]|selectattr('a')|list }} {{ [{'t':'x'},{'t':'y'}]|selectattr('t','equalto','x')|list }} {{ [{'t':'x'},{'t':'y'}]|rejectattr('t','equalto','x')|list }})j", R"j([{'a': 1}] [{'t': 'x'}] [{'t': 'y'}])j"},
      {R"j({{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages|rejectattr('content', 'defined')|list }})j", R"j(2 [{'role': 'assistant'}])j", R"j({"messages": [{"role": "user", "content": "a"}, {"role": "assistant"}, {"role": "user", "content": "b"}]})j"},
  });
}

}  // namespace
}  // namespace met
