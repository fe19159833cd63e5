// NumPy's uncompressed .npz files: see npz.h.
#include "labs/15_mini_gpt/npz.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace mha::npz {
namespace {

// ------------------------------------------------------------ little endian

void put16(std::string& out, std::uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}
std::uint64_t get(const std::string& in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[at + i]);
  return v;
}

// CRC-32 (the zip and PNG polynomial, reflected 0xEDB88320), which readers
// check against every member.
std::uint32_t crc32(const std::string& data) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// ------------------------------------------------------------------- UTF-8

std::vector<std::uint32_t> code_points(const std::string& utf8) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < utf8.size();) {
    const auto b = static_cast<unsigned char>(utf8[i]);
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > utf8.size()) {
      throw std::runtime_error("npz: \"" + utf8 + "\" is not valid UTF-8");
    }
    std::uint32_t cp = n == 1 ? b : b & (0x7f >> n);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3f);
    out.push_back(cp);
    i += static_cast<std::size_t>(n);
  }
  return out;
}

std::string utf8_of(std::uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return s;
}

// -------------------------------------------------------------------- .npy

std::size_t item_size(const std::string& descr, const std::string& what) {
  if (descr == "<f4") return 4;
  if (descr == "<f8" || descr == "<i8" || descr == "<u8") return 8;
  if (descr.size() > 2 && descr.compare(0, 2, "<U") == 0) {
    return 4 * static_cast<std::size_t>(std::stoul(descr.substr(2)));
  }
  throw std::runtime_error("npz: " + what + " has element type '" + descr +
                           "', expected '<f4', '<f8', '<i8', '<u8' or '<U<n>'");
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string npy_bytes(const Array& a) {
  std::string header = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': " +
                       shape_text(a.shape) + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64 bytes.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  put16(out, static_cast<std::uint32_t>(header.size()));
  return out + header + a.bytes;
}

// The value of 'key' in an .npy header dict: the text after "'key': ".
std::string header_field(const std::string& header, const std::string& key,
                         const std::string& what) {
  const std::size_t at = header.find("'" + key + "':");
  if (at == std::string::npos) {
    throw std::runtime_error("npz: " + what + "'s header has no '" + key + "': " + header);
  }
  std::size_t v = at + key.size() + 3;
  while (v < header.size() && header[v] == ' ') ++v;
  return header.substr(v);
}

Array parse_npy(const std::string& data, const std::string& what) {
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0) {
    throw std::runtime_error("npz: " + what + " is not an .npy array");
  }
  const int major = static_cast<unsigned char>(data[6]);
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t header_len = get(data, 8, static_cast<int>(length_bytes));
  const std::size_t start = 8 + length_bytes;
  if (major < 1 || major > 3 || start + header_len > data.size()) {
    throw std::runtime_error("npz: " + what + " has a truncated or unknown .npy header");
  }
  const std::string header = data.substr(start, header_len);
  Array a;
  const std::string descr = header_field(header, "descr", what);
  a.descr = descr.substr(1, descr.find('\'', 1) - 1);
  if (header_field(header, "fortran_order", what).compare(0, 5, "False") != 0) {
    throw std::runtime_error("npz: " + what + " is in Fortran order, expected C order");
  }
  const std::string shape = header_field(header, "shape", what);
  const std::string inside = shape.substr(1, shape.find(')') - 1);
  std::stringstream dims(inside);
  for (std::string dim; std::getline(dims, dim, ',');) {
    if (dim.find_first_not_of(' ') != std::string::npos) a.shape.push_back(std::stoul(dim));
  }
  a.bytes = data.substr(start + header_len);
  const std::size_t expected = a.size() * item_size(a.descr, what);
  if (a.bytes.size() != expected) {
    throw std::runtime_error("npz: " + what + " holds " + std::to_string(a.bytes.size()) +
                             " bytes of data, expected " + std::to_string(expected) +
                             " for shape " + shape_text(a.shape));
  }
  return a;
}

void check_type(const Array& a, const std::string& descr, bool scalar, const std::string& what) {
  if (a.descr != descr || (scalar && !a.shape.empty())) {
    throw std::runtime_error("npz: " + what + " is " + a.descr + " of shape " +
                             shape_text(a.shape) + ", expected " + descr +
                             (scalar ? " of shape ()" : ""));
  }
}

template <class T>
std::vector<T> elements(const Array& a) {
  std::vector<T> out(a.size());
  std::memcpy(out.data(), a.bytes.data(), a.bytes.size());  // the host is little-endian (x86, arm64)
  return out;
}

template <class T>
std::string raw(const T* values, std::size_t n) {
  return std::string(reinterpret_cast<const char*>(values), n * sizeof(T));
}

std::string text_bytes(const std::string& utf8, std::size_t width) {
  std::vector<std::uint32_t> cps = code_points(utf8);
  cps.resize(width, 0);  // NumPy pads with zeros
  return raw(cps.data(), cps.size());
}

}  // namespace

// ------------------------------------------------------------------ Array

std::size_t Array::size() const {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

Array Array::Floats(std::vector<std::size_t> shape, const float* values) {
  Array a{"<f4", std::move(shape), ""};
  a.bytes = raw(values, a.size());
  return a;
}

Array Array::Int64s(std::vector<std::size_t> shape, const std::vector<std::int64_t>& values) {
  Array a{"<i8", std::move(shape), ""};
  if (values.size() != a.size()) throw std::invalid_argument("npz: Int64s: shape and values differ");
  a.bytes = raw(values.data(), values.size());
  return a;
}

Array Array::Float64(double value) { return {"<f8", {}, raw(&value, 1)}; }

Array Array::UInt64(std::uint64_t value) { return {"<u8", {}, raw(&value, 1)}; }

Array Array::Texts(const std::vector<std::string>& utf8) {
  std::size_t width = 1;
  for (const std::string& s : utf8) width = std::max(width, code_points(s).size());
  Array a{"<U" + std::to_string(width), {utf8.size()}, ""};
  for (const std::string& s : utf8) a.bytes += text_bytes(s, width);
  return a;
}

Array Array::Text(const std::string& utf8) {
  const std::size_t width = std::max<std::size_t>(1, code_points(utf8).size());
  return {"<U" + std::to_string(width), {}, text_bytes(utf8, width)};
}

std::vector<float> Array::AsFloats(const std::string& what) const {
  check_type(*this, "<f4", false, what);
  return elements<float>(*this);
}

std::vector<std::int64_t> Array::AsInt64s(const std::string& what) const {
  check_type(*this, "<i8", false, what);
  return elements<std::int64_t>(*this);
}

double Array::AsFloat64(const std::string& what) const {
  check_type(*this, "<f8", true, what);
  return elements<double>(*this)[0];
}

std::uint64_t Array::AsUInt64(const std::string& what) const {
  check_type(*this, "<u8", true, what);
  return elements<std::uint64_t>(*this)[0];
}

std::vector<std::string> Array::AsTexts(const std::string& what) const {
  if (descr.compare(0, 2, "<U") != 0) {
    throw std::runtime_error("npz: " + what + " is " + descr + ", expected text ('<U<n>')");
  }
  const std::size_t width = item_size(descr, what) / 4;
  const std::vector<std::uint32_t> cps = elements<std::uint32_t>(
      Array{"<u4", {size() * width}, bytes});
  std::vector<std::string> out;
  for (std::size_t i = 0; i < size(); ++i) {
    std::string s;
    for (std::size_t k = 0; k < width && cps[i * width + k] != 0; ++k) s += utf8_of(cps[i * width + k]);
    out.push_back(s);
  }
  return out;
}

// ---------------------------------------------------------------- Archive

void Archive::Add(const std::string& name, Array array) {
  for (auto& [n, a] : members_) {
    if (n == name) {
      a = std::move(array);
      return;
    }
  }
  members_.emplace_back(name, std::move(array));
}

bool Archive::Has(const std::string& name) const {
  for (const auto& m : members_) {
    if (m.first == name) return true;
  }
  return false;
}

const Array& Archive::Get(const std::string& name) const {
  for (const auto& m : members_) {
    if (m.first == name) return m.second;
  }
  throw std::runtime_error("npz: no array named \"" + name + "\"");
}

std::vector<std::string> Archive::Names() const {
  std::vector<std::string> names;
  for (const auto& m : members_) names.push_back(m.first);
  return names;
}

void Archive::Write(const std::filesystem::path& path) const {
  // A zip archive: per member a local header, the stored bytes; then the
  // central directory (one entry per member) and its end record. Times are
  // fixed (1980-01-01 00:00) so that the same arrays give the same bytes.
  constexpr std::uint32_t kTime = 0, kDate = (0 << 9) | (1 << 5) | 1;
  std::string out, directory;
  for (const auto& [name, array] : members_) {
    const std::string file = name + ".npy", data = npy_bytes(array);
    if (out.size() + data.size() > 0xFFFFFFF0u) throw std::runtime_error("npz: over 4 GiB");
    const std::uint32_t offset = static_cast<std::uint32_t>(out.size()), crc = crc32(data);
    const auto size = static_cast<std::uint32_t>(data.size());
    std::string common;  // version, flags, method, time, date, crc, sizes, name length
    put16(common, 20), put16(common, 0), put16(common, 0), put16(common, kTime),
        put16(common, kDate), put32(common, crc), put32(common, size), put32(common, size),
        put16(common, static_cast<std::uint32_t>(file.size()));
    put32(out, 0x04034b50), out += common, put16(out, 0), out += file, out += data;
    put32(directory, 0x02014b50), put16(directory, 20), directory += common;
    put16(directory, 0), put16(directory, 0), put16(directory, 0), put16(directory, 0);
    put32(directory, 0), put32(directory, offset), directory += file;
  }
  const auto directory_at = static_cast<std::uint32_t>(out.size());
  out += directory;
  put32(out, 0x06054b50), put16(out, 0), put16(out, 0);
  put16(out, static_cast<std::uint32_t>(members_.size()));
  put16(out, static_cast<std::uint32_t>(members_.size()));
  put32(out, static_cast<std::uint32_t>(directory.size())), put32(out, directory_at);
  put16(out, 0);

  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!f) throw std::runtime_error("npz: cannot write " + tmp.string());
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("npz: cannot write " + path.string() + ": " + ec.message());
}

Archive Archive::Read(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("npz: cannot open " + path.string());
  const std::string in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string where = path.string();
  auto need = [&](std::size_t end, const std::string& what) {
    if (end > in.size()) {
      throw std::runtime_error("npz: " + where + " is truncated (" + what + ")");
    }
  };
  // The end record: its signature, searched back from the end (past a comment).
  if (in.size() < 22) throw std::runtime_error("npz: " + where + " is not a zip archive (.npz)");
  std::size_t end = std::string::npos;
  for (std::size_t i = in.size() - 22;; --i) {
    if (get(in, i, 4) == 0x06054b50) {
      end = i;
      break;
    }
    if (i == 0 || in.size() - i > 22 + 65535) break;
  }
  if (end == std::string::npos) {
    throw std::runtime_error("npz: " + where + " is not a zip archive (.npz)");
  }
  const std::size_t count = get(in, end + 10, 2);
  std::size_t at = get(in, end + 16, 4);
  Archive archive;
  for (std::size_t m = 0; m < count; ++m) {
    need(at + 46, "central directory");
    if (get(in, at, 4) != 0x02014b50) throw std::runtime_error("npz: " + where + ": bad directory");
    const std::size_t method = get(in, at + 10, 2), crc = get(in, at + 16, 4);
    std::size_t size = get(in, at + 20, 4), full_size = get(in, at + 24, 4);
    std::size_t local = get(in, at + 42, 4);
    const std::size_t name_len = get(in, at + 28, 2), extra_len = get(in, at + 30, 2),
                      comment_len = get(in, at + 32, 2);
    need(at + 46 + name_len + extra_len, "central directory");
    const std::string file = in.substr(at + 46, name_len);
    // Zip64 (np.savez asks for it): the fields saturated at 0xFFFFFFFF follow
    // in the extra field 0x0001, in this order: size, compressed size, offset.
    for (std::size_t e = at + 46 + name_len; e + 4 <= at + 46 + name_len + extra_len;) {
      const std::size_t id = get(in, e, 2), len = get(in, e + 2, 2);
      if (id == 0x0001) {
        std::size_t p = e + 4;
        if (full_size == 0xFFFFFFFF) full_size = get(in, p, 8), p += 8;
        if (size == 0xFFFFFFFF) size = get(in, p, 8), p += 8;
        if (local == 0xFFFFFFFF) local = get(in, p, 8);
      }
      e += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (method != 0) {
      throw std::runtime_error("npz: " + where + ": " + file +
                               " is compressed; save with np.savez, not np.savez_compressed");
    }
    need(local + 30, file);
    const std::size_t data_at = local + 30 + get(in, local + 26, 2) + get(in, local + 28, 2);
    need(data_at + size, file);
    const std::string data = in.substr(data_at, size);
    if (crc32(data) != crc) throw std::runtime_error("npz: " + where + ": " + file + " is corrupt");
    if (file.size() < 4 || file.compare(file.size() - 4, 4, ".npy") != 0) continue;
    const std::string name = file.substr(0, file.size() - 4);
    archive.Add(name, parse_npy(data, where + ": " + name));
  }
  return archive;
}

}  // namespace mha::npz
