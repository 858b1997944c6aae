// NumPy .npz archives (zips of .npy entries), read and written through libzip.
#include <zip.h>

#include <algorithm>
#include <new>
#include <random>
#include <set>
#include <string_view>

#include "core/mapped_file.h"
#include "core/tensor_file.h"
#include "npy_layout.h"

namespace reduce {

namespace {
// 1980-01-01 00:00 local time is the earliest time a zip entry can hold.
constexpr time_t kZipEpoch = 315532800 + 86400;
}  // namespace


namespace fs = std::filesystem;

namespace {

struct ZipDiscard {
  void operator()(zip_t* zip) const { zip_discard(zip); }
};
struct ZipFileClose {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};
using ZipArchive = std::unique_ptr<zip_t, ZipDiscard>;
using ZipEntry = std::unique_ptr<zip_file_t, ZipFileClose>;

// Deflate cannot expand data more than this, so a larger claimed size is a lie.
constexpr uint64_t kMaxDeflateRatio = 1032;
// Room for the .npy header on top of the tensor size limit.
constexpr uint64_t kMaxNpyHeader = uint64_t{1} << 20;
constexpr std::string_view kNpySuffix = ".npy";

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// Reads one entry whole; its declared sizes are checked against the archive and against `budget`
// (what the archive's entries may still hold in all) before allocating.
Expected<Tensor> read_entry(zip_t* zip, zip_uint64_t index, const zip_stat_t& st, uint64_t archive_size,
                            uint64_t budget) {
  constexpr zip_uint64_t kNeeded = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & kNeeded) != kNeeded) return make_error("the archive does not record its size");
  if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
    return make_error("compression method " + std::to_string(st.comp_method) +
                      " is not supported (only stored or deflated)");
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
    return make_error("encrypted entries are not supported");
  if (st.comp_size > archive_size)
    return make_error("claims " + std::to_string(st.comp_size) + " compressed bytes, more than the whole archive");
  const uint64_t max_size = st.comp_method == ZIP_CM_STORE ? st.comp_size : st.comp_size * kMaxDeflateRatio + 1024;
  if (st.size > max_size)
    return make_error("claims " + std::to_string(st.size) + " bytes, more than its " + std::to_string(st.comp_size) +
                      " compressed bytes can hold");
  if (st.size > kMaxNpyHeader && st.size - kMaxNpyHeader > max_tensor_bytes())
    return make_error("its " + std::to_string(st.size) + " bytes exceed the size limit of " +
                      std::to_string(max_tensor_bytes()) + " bytes");
  if (st.size > budget)
    return make_error("inflates to " + std::to_string(st.size) + " bytes, more than the " + std::to_string(budget) +
                      " bytes left of the limit (--max-memory)");

  ZipEntry file(zip_fopen_index(zip, index, 0));
  if (!file) return make_error(std::string("cannot open: ") + zip_strerror(zip));
  uint64_t done = 0;
  auto read_to = [&](std::byte* buffer, uint64_t end) -> Status {
    while (done < end) {
      const zip_int64_t n = zip_fread(file.get(), buffer + done, end - done);
      if (n < 0) return make_error(std::string("cannot read: ") + zip_file_strerror(file.get()));
      if (n == 0) return make_error("data ends after " + std::to_string(done) + " of " + std::to_string(st.size) + " bytes");
      done += static_cast<uint64_t>(n);
    }
    return {};
  };
  // The .npy header first: the entry must hold what it declares before the rest is inflated.
  std::vector<std::byte> head(std::min<uint64_t>(st.size, detail::kNpyPreambleBytes));
  REDUCE_TRY(read_to(head.data(), head.size()));
  REDUCE_ASSIGN(const uint64_t header_size, detail::npy_header_size(head));
  if (header_size > st.size || header_size > kMaxNpyHeader)
    return make_error("its .npy header of " + std::to_string(header_size) + " bytes does not fit in its " +
                      std::to_string(st.size) + " bytes");
  if (header_size > head.size()) {
    head.resize(header_size);
    REDUCE_TRY(read_to(head.data(), header_size));
  }
  REDUCE_ASSIGN(const uint64_t data_size, detail::npy_data_size(head));
  // Within the size limit too, since the entry's size is (checked above).
  if (header_size + data_size != st.size)
    return make_error("its .npy header needs " + std::to_string(data_size) + " bytes of data, the file has " +
                      std::to_string(st.size - header_size));
  // The tensor will be a view of this buffer; new[] aligns it for every element type.
  std::shared_ptr<std::byte[]> buffer(new (std::nothrow) std::byte[st.size ? st.size : 1]);
  if (!buffer) return make_error("cannot allocate its " + std::to_string(st.size) + " bytes (out of memory)");
  std::copy(head.begin(), head.end(), buffer.get());
  REDUCE_TRY(read_to(buffer.get(), st.size));
  // Reading up to the end is what makes libzip check the CRC.
  std::byte extra;
  const zip_int64_t n = zip_fread(file.get(), &extra, 1);
  if (n < 0) return make_error(std::string("cannot read: ") + zip_file_strerror(file.get()));
  if (n > 0) return make_error("holds more data than its declared " + std::to_string(st.size) + " bytes");
  const std::span<const std::byte> bytes(buffer.get(), st.size);
  return parse_npy(bytes, std::move(buffer));
}

// Removes a temporary file unless it was renamed into place.
class TemporaryPath {
 public:
  explicit TemporaryPath(fs::path path) : path_(std::move(path)) {}
  ~TemporaryPath() {
    std::error_code ec;
    if (!path_.empty()) fs::remove(path_, ec);
  }
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;

  const fs::path& path() const { return path_; }
  Status rename_to(const fs::path& target) {
    std::error_code ec;
    fs::rename(path_, target, ec);
    if (ec) return Error{target.string(), "cannot write: " + ec.message()};
    path_.clear();
    return {};
  }

 private:
  fs::path path_;
};

// A zip with no entries: just the end-of-central-directory record (libzip writes no file at all).
Status write_empty_zip(const fs::path& path) {
  std::string eocd = "PK\x05\x06";
  eocd.append(18, '\0');
  return write_file_atomic(path, eocd);
}

}  // namespace

Expected<std::vector<NamedTensor>> read_npz(const fs::path& path, uint64_t max_bytes) {
  uint64_t budget = max_bytes ? max_bytes : UINT64_MAX;
  const std::string where = path.string();
  // Mapped (only regular files: a FIFO is refused, not waited on); libzip reads the map.
  REDUCE_ASSIGN(auto file, MappedFile::open(path));
  const uint64_t archive_size = file->bytes().size();
  if (archive_size == 0) return Error{where, "the file is empty"};
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(file->bytes().data(), archive_size, 0, &error);
  ZipArchive zip(source ? zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error) : nullptr);
  const int code = zip_error_code_zip(&error);
  zip_error_fini(&error);
  if (!zip) {
    if (source) zip_source_free(source);
    if (code == ZIP_ER_NOZIP) return Error{where, "not a zip archive (truncated, or not an .npz file?)"};
    return Error{where, "cannot open the archive: " + zip_error_text(code)};
  }
  const zip_int64_t count = zip_get_num_entries(zip.get(), 0);
  std::vector<NamedTensor> tensors;
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip.get(), index, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
      return Error{where, "cannot read entry " + std::to_string(i) + ": " + zip_strerror(zip.get())};
    const std::string entry = st.name;
    if (entry.size() < kNpySuffix.size() || !entry.ends_with(kNpySuffix))
      return Error{where, "entry '" + entry + "' is not a .npy file"};
    auto tensor = read_entry(zip.get(), index, st, archive_size, budget);
    if (!tensor) return Error{where, "entry '" + entry + "': " + tensor.error().what};
    budget -= std::min(budget, static_cast<uint64_t>(st.size));
    tensors.push_back(NamedTensor{entry.substr(0, entry.size() - kNpySuffix.size()), std::move(tensor).value()});
  }
  return tensors;
}

Status write_npz(const fs::path& path, const std::vector<NamedTensor>& tensors, bool compress) {
  const std::string where = path.string();
  // Headers first: a tensor numpy cannot hold fails before any file is touched.
  std::vector<std::string> headers;
  headers.reserve(tensors.size());
  std::set<std::string_view> names;
  for (const auto& t : tensors) {
    if (!names.insert(t.name).second) return Error{where, "two tensors are named '" + t.name + "'"};
    auto header = npy_header(t.tensor);
    if (!header) return Error{where, "tensor '" + t.name + "': " + header.error().what};
    headers.push_back(std::move(header).value());
  }
  if (tensors.empty()) return write_empty_zip(path);

  // libzip writes to a path of its own choosing; write beside the target and rename into place.
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  TemporaryPath tmp(dir / ("." + path.filename().string() + ".tmp" + std::to_string(std::random_device{}())));
  int code = 0;
  ZipArchive zip(zip_open(tmp.path().c_str(), ZIP_CREATE | ZIP_EXCL, &code));
  if (!zip) return Error{where, "cannot write: " + zip_error_text(code)};
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string entry = tensors[i].name + std::string(kNpySuffix);
    const auto data = tensors[i].tensor.bytes();
    // Two fragments, header and tensor bytes, so the tensor is not copied; libzip only reads them.
    zip_buffer_fragment_t parts[2] = {
        {reinterpret_cast<zip_uint8_t*>(headers[i].data()), headers[i].size()},
        {reinterpret_cast<zip_uint8_t*>(const_cast<std::byte*>(data.data())), data.size()}};
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_fragment_create(parts, data.empty() ? 1 : 2, 0, &error);
    if (!source) {
      const std::string text = zip_error_strerror(&error);
      zip_error_fini(&error);
      return Error{where, "cannot add entry '" + entry + "': " + text};
    }
    zip_error_fini(&error);
    const zip_int64_t index = zip_file_add(zip.get(), entry.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      return Error{where, "cannot add entry '" + entry + "': " + zip_strerror(zip.get())};
    }
    const zip_int32_t method = compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
    if (zip_set_file_compression(zip.get(), static_cast<zip_uint64_t>(index), method, 0) != 0)
      return Error{where, "cannot compress entry '" + entry + "': " + zip_strerror(zip.get())};
    // A fixed timestamp (1980-01-01, the zip epoch) makes the same tensors give the same bytes.
    if (zip_file_set_mtime(zip.get(), static_cast<zip_uint64_t>(index), kZipEpoch, 0) != 0)
      return Error{where, "cannot set the time of entry '" + entry + "': " + zip_strerror(zip.get())};
  }
  if (zip_close(zip.get()) != 0) return Error{where, std::string("cannot write: ") + zip_strerror(zip.get())};
  zip.release();  // zip_close freed it
  return tmp.rename_to(path);
}

}  // namespace reduce
