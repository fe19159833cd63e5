#include "common/grading.h"

#include <string>

#include <gtest/gtest.h>

namespace mha {
namespace grading {
namespace {

// RFC 4231, test case 2.
TEST(HmacSha256, MatchesTheRfc4231Vector) {
  EXPECT_EQ(HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

// RFC 4231, test case 6: a key longer than one block is hashed first.
TEST(HmacSha256, HashesKeysLongerThanOneBlock) {
  EXPECT_EQ(HmacSha256Hex(std::string(131, '\xaa'),
                          "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(Grading, IsInactiveOutsideTheGrader) {
  EXPECT_FALSE(Active());
  Send("X", {"ignored"});  // a no-op, never a crash
}

}  // namespace
}  // namespace grading
}  // namespace mha
