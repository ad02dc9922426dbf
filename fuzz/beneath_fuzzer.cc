// common/beneath.h on hostile names and link layouts. Each input builds a tree under a sandbox's
// root/ (directories, files, FIFOs, links to outside/, to outside/secret, to "..", to "."), then
// runs BeneathDir calls on names drawn from the same alphabet, with openat2 or the openat walk.
// The property: nothing outside root/ is ever read, written, created or removed, every fd a call
// returns lies beneath root/, and no call blocks (a FIFO is never opened for reading blocking).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/beneath.h"

namespace {
namespace fs = std::filesystem;
using trainyard::BeneathDir;

struct Sandbox {
  fs::path base, root, outside;
  Sandbox() {
    std::string tmpl = (fs::temp_directory_path() / "beneath-fuzz-XXXXXX").string();
    base = ::mkdtemp(tmpl.data());
    root = base / "root";
    outside = base / "outside";
    fs::create_directories(outside / "d");
    std::ofstream(outside / "secret") << "secret";
  }
  // What outside/ holds: every name with its type and size, and the secret's bytes.
  std::string Snapshot() const {
    std::string out;
    for (const auto& e : fs::recursive_directory_iterator(outside)) {
      out += e.path().string() + ":" + std::to_string(int(e.symlink_status().type())) + ":" +
             (e.is_regular_file() ? std::to_string(e.file_size()) : "") + ";";
    }
    std::ifstream in(outside / "secret");
    return out + std::string(std::istreambuf_iterator<char>(in), {});
  }
};

// Reads names and op codes off the input.
struct Input {
  const uint8_t* data;
  size_t size;
  uint8_t Byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  std::string Name() {
    static const char* kParts[] = {"a", "b", "c", "..", ".", "", "d/", "x"};
    std::string out;
    const int parts = 1 + Byte() % 4;
    for (int i = 0; i < parts; ++i) {
      if (i > 0) out += '/';
      out += kParts[Byte() % 8];
    }
    return out;
  }
};

// Whether `p`'s directories below root/ are real directories, not links: the layout is made with
// plain path calls, which would follow a link the layout itself made and write outside root/.
bool NoLinkOnTheWay(const fs::path& p, const Sandbox& box) {
  fs::path walked = box.root;
  const fs::path rel = p.lexically_relative(box.root);
  for (auto it = rel.begin(); it != rel.end(); ++it) {
    walked /= *it;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(walked, ec))) return false;  // the last one too
  }
  return true;
}

void Build(Input& in, const Sandbox& box) {
  const int ops = in.Byte() % 12;
  for (int i = 0; i < ops; ++i) {
    const uint8_t op = in.Byte() % 7;
    const fs::path p = box.root / in.Name();
    std::error_code ec;
    if (p.lexically_normal().string().rfind(box.root.string(), 0) != 0) continue;
    if (p.string().find("/..") != std::string::npos || !NoLinkOnTheWay(p, box)) continue;
    // Only new names: writing an existing FIFO with a plain ofstream would block the harness.
    std::error_code exists;
    if (fs::exists(fs::symlink_status(p, exists))) continue;
    switch (op) {
      case 0:
        fs::create_directories(p, ec);
        break;
      case 1:
        std::ofstream(p) << "in";
        break;
      case 2:
        fs::create_symlink(box.outside, p, ec);
        break;
      case 3:
        fs::create_symlink(box.outside / "secret", p, ec);
        break;
      case 4:
        fs::create_symlink("..", p, ec);
        break;
      case 5:
        fs::create_symlink(".", p, ec);
        break;
      case 6:
        ::mkfifo(p.c_str(), 0644);
        break;
    }
  }
}

// The fd lies beneath root/ (its /proc/self/fd link names the file it opened).
void CheckBeneath(int fd, const Sandbox& box) {
  char buf[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return;
  const std::string target(buf, static_cast<size_t>(n));
  if (target.rfind(box.root.string(), 0) != 0) std::abort();
}

void Run(Input& in, const Sandbox& box, const BeneathDir& dir) {
  const int calls = 1 + in.Byte() % 6;
  for (int i = 0; i < calls; ++i) {
    const uint8_t op = in.Byte() % 10;
    const std::string name = in.Name();
    switch (op) {
      case 0:
        if (auto fd = dir.OpenRegular(name); fd.ok()) CheckBeneath(fd->get(), box);
        break;
      case 1:
        if (auto fd = dir.OpenFile(name, O_WRONLY | O_CREAT | O_NONBLOCK, 0644); fd.ok()) {
          CheckBeneath(fd->get(), box);
          (void)::write(fd->get(), "w", 1);
        }
        break;
      case 2:
        if (auto d = dir.MakeDirs(name, 0755); d.ok()) CheckBeneath(d->fd(), box);
        break;
      case 3:
        (void)dir.RemoveAll(name);
        break;
      case 4:
        (void)dir.Unlink(name);
        break;
      case 5:
        (void)dir.Rename(name, dir, in.Name());
        break;
      case 6:
        (void)dir.List(name);
        break;
      case 7:
        (void)dir.ReplaceFile(name, "replaced", false);
        break;
      case 8:
        (void)dir.ReadFile(name, 1 << 16);
        break;
      case 9:
        if (auto d = dir.OpenDir(name); d.ok()) CheckBeneath(d->fd(), box);
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Sandbox box;
  static const std::string before = box.Snapshot();
  std::error_code ec;
  fs::remove_all(box.root, ec);  // does not follow links
  fs::create_directories(box.root);
  Input in{data, size};
  BeneathDir::ForceWalkForTesting(in.Byte() % 2 == 1);
  Build(in, box);
  auto dir = BeneathDir::Open(box.root);
  if (!dir.ok()) std::abort();
  Run(in, box, *dir);
  if (box.Snapshot() != before) std::abort();
  return 0;
}
