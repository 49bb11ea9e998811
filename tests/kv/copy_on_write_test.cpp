// fork() for n > 1 and copy-on-write of a shared, partially filled last block.
#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::concat;
using testing::ids;
using testing::make_manager;
using testing::seq;

TEST(CopyOnWrite, ForkSharesThenWriterCopiesPartialBlock) {
  auto kv = make_manager(10, 4);
  const auto prompt = seq(0, 6);
  ASSERT_EQ(kv.allocate_slots(1, prompt, 6)->new_blocks, ids({1, 2}));
  kv.fork(1, 2);
  EXPECT_EQ(kv.block_table(2), ids({1, 2}));
  EXPECT_EQ(kv.n_tokens(2), 6);
  EXPECT_EQ(kv.pool().ref_count(BlockId{1}), 2);
  EXPECT_EQ(kv.pool().ref_count(BlockId{2}), 2);

  const auto child = concat(prompt, {500});
  const auto a = kv.allocate_slots(2, child, 1);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->new_blocks.empty());
  EXPECT_EQ(a->copies, (std::vector<BlockCopy>{{BlockId{2}, BlockId{3}}}));
  EXPECT_EQ(kv.block_table(2), ids({1, 3}));
  EXPECT_EQ(kv.pool().ref_count(BlockId{1}), 2);
  EXPECT_EQ(kv.pool().ref_count(BlockId{2}), 1);
  EXPECT_EQ(kv.pool().ref_count(BlockId{3}), 1);
  EXPECT_EQ(kv.slot(2, 6), 3 * 4 + 2);

  // The parent now owns block 2 alone: no copy.
  const auto parent = concat(prompt, {600});
  EXPECT_TRUE(kv.allocate_slots(1, parent, 1)->copies.empty());
  EXPECT_EQ(kv.slot(1, 6), 2 * 4 + 2);

  // The child's private block fills up and is published under the child's own tokens.
  const auto child_full = concat(child, {501});
  EXPECT_TRUE(kv.allocate_slots(2, child_full, 1)->copies.empty());
  EXPECT_TRUE(kv.pool().is_cached(BlockId{3}));
  kv.free(1);
  kv.free(2);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
  EXPECT_EQ(kv.get_computed_blocks(concat(child_full, {502})).blocks, ids({1, 3}));
}

TEST(CopyOnWrite, ThreeWayForkCopiesUntilLastOwner) {
  auto kv = make_manager(10, 4);
  const auto prompt = seq(0, 5);
  ASSERT_EQ(kv.allocate_slots(1, prompt, 5)->new_blocks, ids({1, 2}));
  kv.fork(1, 2);
  kv.fork(1, 3);
  EXPECT_EQ(kv.pool().ref_count(BlockId{2}), 3);
  EXPECT_EQ(kv.allocate_slots(2, concat(prompt, {7}), 1)->copies, (std::vector<BlockCopy>{{BlockId{2}, BlockId{3}}}));
  EXPECT_EQ(kv.allocate_slots(3, concat(prompt, {8}), 1)->copies, (std::vector<BlockCopy>{{BlockId{2}, BlockId{4}}}));
  EXPECT_TRUE(kv.allocate_slots(1, concat(prompt, {9}), 1)->copies.empty());
  EXPECT_EQ(kv.block_table(1), ids({1, 2}));
  EXPECT_EQ(kv.block_table(2), ids({1, 3}));
  EXPECT_EQ(kv.block_table(3), ids({1, 4}));
  EXPECT_EQ(kv.pool().ref_count(BlockId{1}), 3);
  for (RequestId id : {1, 2, 3}) kv.free(id);
  EXPECT_DOUBLE_EQ(kv.usage(), 0.0);
}

TEST(CopyOnWrite, ForkAtBlockBoundaryNeedsNoCopy) {
  auto kv = make_manager(10, 4);
  const auto prompt = seq(0, 8);
  ASSERT_TRUE(kv.allocate_slots(1, prompt, 8));
  kv.fork(1, 2);
  const auto a = kv.allocate_slots(2, concat(prompt, {1}), 1);
  EXPECT_TRUE(a->copies.empty());
  EXPECT_EQ(a->new_blocks, ids({3}));
  EXPECT_EQ(kv.block_table(2), ids({1, 2, 3}));
}

TEST(CopyOnWrite, CopyThatDoesNotFitChangesNothing) {
  auto kv = make_manager(3, 4);  // 2 usable
  const auto prompt = seq(0, 6);
  ASSERT_TRUE(kv.allocate_slots(1, prompt, 6));
  kv.fork(1, 2);
  EXPECT_FALSE(kv.allocate_slots(2, concat(prompt, {1}), 1).has_value());
  EXPECT_EQ(kv.block_table(2), ids({1, 2}));
  EXPECT_EQ(kv.n_tokens(2), 6);
  EXPECT_EQ(kv.pool().ref_count(BlockId{2}), 2);
  kv.free(1);  // now the child is the only owner: it writes in place
  EXPECT_TRUE(kv.allocate_slots(2, concat(prompt, {1}), 1)->copies.empty());
}

}  // namespace
}  // namespace kairo::kv
