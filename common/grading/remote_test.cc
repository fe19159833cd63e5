// The remote-call layer: the wire format on its own, then real calls into a
// toy server process (common/grading/testdata/toy*.cc) as the grader makes them.
#include "common/grading/remote.h"

#include <chrono>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "common/grading/testdata/toy.h"

namespace mha {
namespace {

template <class T>
T RoundTrip(const T& value) {
  remote::Writer w;
  remote::Encode(w, value);
  remote::Reader r(w.bytes());
  T out = remote::internal::Blank<T>();
  remote::Decode(r, out);
  EXPECT_TRUE(r.AtEnd());
  return out;
}

TEST(RemoteCodec, RoundTripsScalarsStringsAndContainers) {
  EXPECT_EQ(RoundTrip(-7), -7);
  EXPECT_EQ(RoundTrip(std::size_t{1} << 40), std::size_t{1} << 40);
  EXPECT_EQ(RoundTrip(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(RoundTrip(1.5f), 1.5f);
  EXPECT_EQ(RoundTrip(500000.0), 500000.0);  // lab 11's RoPE base, not rounded to float
  EXPECT_EQ(RoundTrip(0.1), 0.1);
  EXPECT_EQ(RoundTrip(std::string("heads")), "heads");
  EXPECT_EQ(RoundTrip(std::vector<bool>{true, false, true}), (std::vector<bool>{true, false, true}));
  EXPECT_FALSE(RoundTrip(std::optional<Tensor2>()).has_value());
}

TEST(RemoteCodec, RoundTripsTensorsOfEveryRankBitForBit) {
  const Tensor3 t = {{{1.0f, -0.0f}, {std::numeric_limits<float>::infinity(), 3.0f}}};
  EXPECT_EQ(RoundTrip(t), t);
  const Tensor1 v = {1.0f, 2.0f, 3.0f};
  EXPECT_EQ(RoundTrip(v), v);
}

TEST(RemoteCodec, RoundTripsDoublesBitForBit) {
  EXPECT_EQ(RoundTrip(0.1), 0.1);
  EXPECT_EQ(RoundTrip(-std::numeric_limits<double>::infinity()),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundTrip(std::numeric_limits<double>::denorm_min()),
            std::numeric_limits<double>::denorm_min());
}

TEST(RemoteCodec, RoundTripsAVectorOfTensors) {
  const std::vector<Tensor3> layers = {Tensor3{{{1.0f, 2.0f}}}, Tensor3{{{3.0f}, {-4.0f}}}};
  EXPECT_EQ(RoundTrip(layers), layers);
  EXPECT_TRUE(RoundTrip(std::vector<Tensor3>()).empty());
}

TEST(RemoteCodec, RejectsAFloatWhereADoubleIsExpected) {
  remote::Writer w;
  remote::Encode(w, 1.5f);
  remote::Reader r(w.bytes());
  double out = 0.0;
  EXPECT_THROW(remote::Decode(r, out), remote::ProtocolError);
}

TEST(RemoteCodec, RejectsAnIntegerThatDoesNotFitTheReceivingType) {
  remote::Writer w;
  remote::Encode(w, std::int64_t{1} << 40);
  remote::Reader r(w.bytes());
  int out = 0;
  EXPECT_THROW(remote::Decode(r, out), remote::ProtocolError);
}

TEST(RemoteCodec, RejectsATruncatedTensor) {
  remote::Writer w;
  remote::Encode(w, Tensor2(xt::ones<float>({4, 4})));
  std::string bytes = w.bytes();
  bytes.resize(bytes.size() - 1);
  remote::Reader r(bytes);
  Tensor2 out;
  EXPECT_THROW(remote::Decode(r, out), remote::ProtocolError);
}

TEST(RemoteCodec, RejectsATensorShapeLargerThanTheMessage) {
  remote::Writer w;
  w.Put(remote::Tag::kTensor);
  w.PutU64(2);
  w.PutU64(std::uint64_t{1} << 40);  // would need 2^42 bytes
  w.PutU64(std::uint64_t{1} << 40);
  remote::Reader r(w.bytes());
  Tensor2 out;
  EXPECT_THROW(remote::Decode(r, out), remote::ProtocolError);
}

TEST(RemoteCodec, RejectsAWrongTag) {
  remote::Writer w;
  remote::Encode(w, 1.0f);
  remote::Reader r(w.bytes());
  std::string out;
  EXPECT_THROW(remote::Decode(r, out), remote::ProtocolError);
}

TEST(RemoteCodec, RejectsASequenceLongerThanTheMessage) {
  remote::Writer w;
  w.Put(remote::Tag::kSequence);
  w.PutU64(std::uint64_t{1} << 50);
  remote::Reader r(w.bytes());
  std::vector<bool> out;
  EXPECT_THROW(remote::Decode(r, out), remote::ProtocolError);
}

// ---------------------------------------------------------------------------
// Calls into the toy server.

class RemoteCall : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("MHA_REMOTE_ARGV", "common/grading/remote_toy_server", 1);
    // Calls back are answered by a reference process, never in this one.
    setenv("MHA_REFERENCE_ARGV", "common/grading/remote_toy_reference", 1);
    setenv("MHA_REMOTE_CALL_TIMEOUT_S", "1", 1);
    setenv("MHA_REMOTE_MAX_TIMEOUTS", "100", 1);
    setenv("MHA_REMOTE_MEMORY_MB", "2048", 1);
  }
};

TEST_F(RemoteCall, ReturnsTheServersResult) {
  EXPECT_EQ(toy::add(2, 3), 5);
  const Tensor2 x = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  EXPECT_EQ(toy::twice(x), x * 2.0f);
  EXPECT_EQ(toy::flip({true, false}), (std::vector<bool>{false, true}));
  EXPECT_EQ(*toy::maybe(x), x);
  EXPECT_FALSE(toy::maybe(std::nullopt).has_value());
}

TEST_F(RemoteCall, RethrowsTheServersStandardExceptionWithItsMessage) {
  try {
    toy::shout("");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "shout: s is empty");
  }
}

TEST_F(RemoteCall, ReportsANonStandardExceptionAsARuntimeError) {
  EXPECT_THROW(toy::throw_int(), std::runtime_error);
}

TEST_F(RemoteCall, ReportsACrashAndStartsAFreshProcessForTheNextCall) {
  try {
    toy::crash();
    FAIL() << "no exception";
  } catch (const remote::LearnerProcessError& e) {
    EXPECT_NE(std::string(e.what()).find("SIGSEGV"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("crash"), std::string::npos) << e.what();
  }
  EXPECT_EQ(toy::add(1, 1), 2);
}

TEST_F(RemoteCall, StopsACallThatRunsPastTheTimeLimit) {
  try {
    toy::spin();
    FAIL() << "no exception";
  } catch (const remote::LearnerProcessError& e) {
    EXPECT_NE(std::string(e.what()).find("did not return within 1 s"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(toy::add(2, 2), 4);
}

TEST_F(RemoteCall, ServesTheServersCallsBackWhileWaiting) { EXPECT_EQ(toy::call_back(5), 51); }

TEST_F(RemoteCall, AnswersNoCallBackWithoutAReferenceProcess) {
  // Cumulative grading: the learner's own earlier labs are in its process.
  unsetenv("MHA_REFERENCE_ARGV");
  try {
    toy::call_back(5);
    ADD_FAILURE() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("nothing answers calls back"), std::string::npos)
        << e.what();
  }
  setenv("MHA_REFERENCE_ARGV", "common/grading/remote_toy_reference", 1);
  EXPECT_EQ(toy::call_back(5), 51);
}

TEST_F(RemoteCall, RefusesACallBackOutsideTheDeclaredCallSurfaceNamingIt) {
  remote::DeclareCallSurface(9, {"helper_rows"});
  try {
    toy::call_back(5);
    ADD_FAILURE() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("lab 9 may not call helper"), std::string::npos)
        << e.what();
  }
  remote::DeclareCallSurface(9, {"helper", "helper_rows"});
  EXPECT_EQ(toy::call_back(5), 51);
}

TEST_F(RemoteCall, AddsUpTheBytesOfEveryCallBackOfOneCallAgainstTheMemoryLimit) {
  setenv("MHA_REMOTE_MEMORY_MB", "1", 1);
  // One call back of 256 KiB fits in 1 MiB; eight of them in one call do not.
  EXPECT_EQ(toy::call_back_many(1, 64, 1024), 64.0f * 1024.0f);
  try {
    toy::call_back_many(8, 64, 1024);
    ADD_FAILURE() << "no exception";
  } catch (const remote::LearnerProcessError& e) {
    EXPECT_NE(std::string(e.what()).find("calls back to earlier labs"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("memory limit of 1 MiB"), std::string::npos)
        << e.what();
  }
  setenv("MHA_REMOTE_MEMORY_MB", "2048", 1);
  // The budget is per call: the next call starts from nothing.
  EXPECT_EQ(toy::call_back_many(1, 64, 1024), 64.0f * 1024.0f);
}

TEST_F(RemoteCall, StopsALearnerThatNeverReadsTheAnswerToItsCallBackWithinTheCallsLimit) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    // 16 MiB of answer: far more than a pipe holds, so writing it blocks.
    toy::call_back_and_never_read(4096, 1024);
    ADD_FAILURE() << "no exception";
  } catch (const remote::LearnerProcessError& e) {
    EXPECT_NE(std::string(e.what()).find("did not return within 1 s"), std::string::npos)
        << e.what();
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0) << "the call's limit is 1 s";
  EXPECT_EQ(toy::add(2, 2), 4);
}

TEST_F(RemoteCall, ConstructsAnObjectRemotelyAndKeepsItsStateHere) {
  toy::Counter c(7);
  EXPECT_EQ(c.peek(), 7);
  EXPECT_EQ(c.next(), 7);
  EXPECT_EQ(c.next(), 8);
  EXPECT_EQ(c.peek(), 9);
}

TEST_F(RemoteCall, KeepsWhatAMethodChangedBeforeItThrew) {
  toy::Counter c(4);
  EXPECT_THROW(c.bump_then_throw(), std::out_of_range);
  EXPECT_EQ(c.peek(), 5);
}

TEST_F(RemoteCall, RethrowsAConstructorsException) {
  EXPECT_THROW(toy::Counter(-1), std::invalid_argument);
}

TEST_F(RemoteCall, SendsAPointedToObjectAndKeepsThePointerHere) {
  toy::Counter base(3);
  toy::Counter c(1);
  c.other = &base;
  EXPECT_EQ(c.next(), 301);  // the server saw base's state through the pointer
  EXPECT_EQ(c.other, &base);  // ...and our pointer still points at our object
  EXPECT_EQ(c.peek(), 2);
}

}  // namespace
}  // namespace mha
