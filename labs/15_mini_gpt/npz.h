// NumPy's .npz files, uncompressed: a zip archive of .npy arrays, written and
// read without NumPy (and read by np.load without pickle).
//
//   mha::npz::Archive a;
//   a.Add("embed", mha::npz::Array::Floats({64, 64}, embed.data()));
//   a.Add("config", mha::npz::Array::Int64s({6}, {64, 32, 64, 4, 256, 2}));
//   a.Add("tokens", mha::npz::Array::Texts({"<bos>", "tú"}));
//   a.Write("model.npz");                  // np.load("model.npz")["embed"]
//   mha::npz::Archive b = mha::npz::Archive::Read("model.npz");
//   const mha::npz::Array& e = b.Get("embed");   // e.descr == "<f4", e.shape == {64, 64}
//
// The format, as NumPy writes it (numpy.lib.format, version 1.0, and
// np.savez): each array is a member "<name>.npy" of a zip archive, stored
// (no compression), holding the magic "\x93NUMPY", the version 1 0, a
// little-endian uint16 header length, a header such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (64, 64), }
// padded with spaces and a newline to a multiple of 64 bytes, then the
// elements in C order, little-endian. Four element types are written and read:
// '<f4' (float32), '<f8' (float64), '<i8' (int64), '<u8' (uint64), and
// '<Un' (text: n UTF-32 code points per element, padded with zeros: NumPy's
// unicode arrays, which need no pickle).
//
// Reading accepts what this writer and np.savez write (stored members, the
// four numeric types and '<Un', C order); anything else, and every
// truncated or inconsistent length, is a std::runtime_error that names the
// file and the member.
#ifndef MHA_LABS_15_MINI_GPT_NPZ_H_
#define MHA_LABS_15_MINI_GPT_NPZ_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace mha::npz {

struct Array {
  std::string descr;               // "<f4", "<f8", "<i8", "<u8" or "<U<n>"
  std::vector<std::size_t> shape;  // () for a scalar
  std::string bytes;               // the elements, C order, little-endian

  std::size_t size() const;        // the number of elements (1 for a scalar)
  static Array Floats(std::vector<std::size_t> shape, const float* values);
  static Array Int64s(std::vector<std::size_t> shape, const std::vector<std::int64_t>& values);
  static Array Float64(double value);          // a scalar
  static Array UInt64(std::uint64_t value);    // a scalar
  static Array Texts(const std::vector<std::string>& utf8);  // shape (n), '<U<longest>'
  static Array Text(const std::string& utf8);  // a scalar '<U<length>'

  // The elements, checked against the type asked for (a std::runtime_error
  // naming `what` and both types otherwise).
  std::vector<float> AsFloats(const std::string& what) const;
  std::vector<std::int64_t> AsInt64s(const std::string& what) const;
  double AsFloat64(const std::string& what) const;     // a scalar
  std::uint64_t AsUInt64(const std::string& what) const;  // a scalar
  std::vector<std::string> AsTexts(const std::string& what) const;  // UTF-8, zeros stripped
};

class Archive {
 public:
  // Adds a member; a second array of the same name replaces the first.
  void Add(const std::string& name, Array array);
  bool Has(const std::string& name) const;
  // The member `name`; std::runtime_error naming it if absent.
  const Array& Get(const std::string& name) const;
  // The members' names, in the order they were added or stored.
  std::vector<std::string> Names() const;

  // Writes the archive to `path` (to a temporary file first, renamed into
  // place: a reader never sees half a file). std::runtime_error on failure.
  void Write(const std::filesystem::path& path) const;
  static Archive Read(const std::filesystem::path& path);

 private:
  std::vector<std::pair<std::string, Array>> members_;
};

}  // namespace mha::npz

#endif  // MHA_LABS_15_MINI_GPT_NPZ_H_
