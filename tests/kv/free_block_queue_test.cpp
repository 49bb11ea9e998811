#include "kv/free_block_queue.h"

#include <gtest/gtest.h>

#include "kv_test_util.h"

namespace kairo::kv {
namespace {

using testing::ids;

TEST(FreeBlockQueue, PushPopRemoveKeepOrder) {
  FreeBlockQueue q(8);
  EXPECT_TRUE(q.empty());
  for (int32_t b : {3, 1, 4, 5}) q.push_back(BlockId{b});
  q.push_front(BlockId{7});
  EXPECT_EQ(q.to_vector(), ids({7, 3, 1, 4, 5}));
  EXPECT_EQ(q.size(), 5);

  q.remove(BlockId{1});  // middle
  q.remove(BlockId{5});  // tail
  q.remove(BlockId{7});  // head
  EXPECT_EQ(q.to_vector(), ids({3, 4}));
  EXPECT_FALSE(q.contains(BlockId{1}));
  EXPECT_TRUE(q.contains(BlockId{4}));

  EXPECT_EQ(q.pop_front(), BlockId{3});
  q.push_back(BlockId{1});
  EXPECT_EQ(q.pop_front(), BlockId{4});
  EXPECT_EQ(q.pop_front(), BlockId{1});
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.to_vector().empty());

  // A removed block can rejoin.
  q.push_back(BlockId{5});
  EXPECT_EQ(q.to_vector(), ids({5}));
}

}  // namespace
}  // namespace kairo::kv
