#include "ingest/elf_symbols.h"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

namespace tracedoc {

namespace {

// A whole file mapped read-only; every view into it stays valid while it lives.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) data_ = static_cast<const char*>(p), size_ = static_cast<size_t>(st.st_size);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {data_ == nullptr ? "" : data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// A struct of type T at `at` in `bytes`, or null when it does not fit (a damaged or truncated file).
template <typename T>
const T* at_offset(std::string_view bytes, uint64_t at) {
  if (at > bytes.size() || bytes.size() - at < sizeof(T)) return nullptr;
  return reinterpret_cast<const T*>(bytes.data() + at);
}

bool is_elf64(std::string_view b) {
  const auto* h = at_offset<Elf64_Ehdr>(b, 0);
  return h != nullptr && std::memcmp(h->e_ident, ELFMAG, SELFMAG) == 0 && h->e_ident[EI_CLASS] == ELFCLASS64 &&
         h->e_ident[EI_DATA] == ELFDATA2LSB;
}

std::vector<const Elf64_Shdr*> sections(std::string_view b) {
  std::vector<const Elf64_Shdr*> out;
  const auto* h = at_offset<Elf64_Ehdr>(b, 0);
  if (h == nullptr || h->e_shentsize != sizeof(Elf64_Shdr)) return out;
  for (uint64_t i = 0; i < h->e_shnum; ++i) {
    const auto* s = at_offset<Elf64_Shdr>(b, h->e_shoff + i * sizeof(Elf64_Shdr));
    if (s == nullptr) return {};
    out.push_back(s);
  }
  return out;
}

// The GNU build id (NT_GNU_BUILD_ID) as hex, empty when the file has none.
std::string build_id(std::string_view b) {
  for (const Elf64_Shdr* s : sections(b)) {
    if (s->sh_type != SHT_NOTE) continue;
    uint64_t at = s->sh_offset;
    const uint64_t end = s->sh_offset + s->sh_size;
    while (at + sizeof(Elf64_Nhdr) <= end) {
      const auto* n = at_offset<Elf64_Nhdr>(b, at);
      if (n == nullptr) break;
      const uint64_t name_at = at + sizeof(Elf64_Nhdr), desc_at = name_at + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && desc_at + n->n_descsz <= b.size() &&
          std::string_view(b.data() + name_at, 3) == "GNU") {
        std::string hex;
        for (uint32_t i = 0; i < n->n_descsz; ++i)
          hex += fmt::format("{:02x}", static_cast<unsigned char>(b[desc_at + i]));
        return hex;
      }
      at = desc_at + ((n->n_descsz + 3) & ~3u);
    }
  }
  return {};
}

}  // namespace

// One ELF file's loadable segments and function symbols.
class ElfFile {
 public:
  static std::unique_ptr<ElfFile> open(const std::string& path) {
    auto f = std::unique_ptr<ElfFile>(new ElfFile(path));
    if (!is_elf64(f->file_.bytes())) return nullptr;
    f->read_segments();
    if (!f->read_functions(f->file_.bytes(), SHT_SYMTAB)) {
      // Debian strips .symtab into a -dbgsym package's file, found by the build id.
      const std::string id = build_id(f->file_.bytes());
      if (id.size() > 2) {
        f->debug_ =
            std::make_unique<MappedFile>("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
        if (is_elf64(f->debug_->bytes())) f->read_functions(f->debug_->bytes(), SHT_SYMTAB);
      }
      if (f->functions_.empty()) f->read_functions(f->file_.bytes(), SHT_DYNSYM);
    }
    // Of several names for one address (aliases), the lookup takes the last: a plain name before a
    // versioned one ("__libc_start_main@GLIBC_2.2.5"), a global before a local, else the table's last.
    std::stable_sort(f->functions_.begin(), f->functions_.end(), [](const Function& a, const Function& b) {
      return a.address != b.address ? a.address < b.address : a.preference < b.preference;
    });
    return f;
  }

  // The file's virtual address of a file offset, through the loadable segment that holds it.
  std::optional<uint64_t> address_of_offset(uint64_t offset) const {
    for (const Segment& s : segments_) {
      if (offset >= s.offset && offset - s.offset < s.size) return s.address + (offset - s.offset);
    }
    return std::nullopt;
  }

  // The (mangled) name of the function holding `address`, empty when none does.
  std::string_view function_at(uint64_t address) const {
    auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                               [](uint64_t a, const Function& f) { return a < f.address; });
    if (it == functions_.begin()) return {};
    const Function& f = *std::prev(it);
    // A symbol without a size (hand-written assembly) covers up to the next one.
    if (f.size != 0 && address - f.address >= f.size) return {};
    return f.name;
  }

 private:
  struct Segment {
    uint64_t offset, size, address;
  };
  struct Function {
    uint64_t address, size;
    std::string_view name;  // in the mapped file
    int preference;         // among aliases: higher wins
  };
  explicit ElfFile(const std::string& path) : file_(path) {}

  void read_segments() {
    const std::string_view b = file_.bytes();
    const auto* h = at_offset<Elf64_Ehdr>(b, 0);
    if (h->e_phentsize != sizeof(Elf64_Phdr)) return;
    for (uint64_t i = 0; i < h->e_phnum; ++i) {
      const auto* p = at_offset<Elf64_Phdr>(b, h->e_phoff + i * sizeof(Elf64_Phdr));
      if (p == nullptr) return;
      if (p->p_type == PT_LOAD) segments_.push_back({p->p_offset, p->p_filesz, p->p_vaddr});
    }
  }

  // The functions of the symbol table of `type` in `b`; false when it has none.
  bool read_functions(std::string_view b, uint32_t type) {
    const std::vector<const Elf64_Shdr*> all = sections(b);
    const size_t before = functions_.size();
    for (const Elf64_Shdr* s : all) {
      if (s->sh_type != type || s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= all.size()) continue;
      const Elf64_Shdr* names = all[s->sh_link];
      for (uint64_t at = s->sh_offset; at + sizeof(Elf64_Sym) <= s->sh_offset + s->sh_size; at += sizeof(Elf64_Sym)) {
        const auto* sym = at_offset<Elf64_Sym>(b, at);
        if (sym == nullptr) break;
        const int kind = ELF64_ST_TYPE(sym->st_info);
        if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || sym->st_shndx == SHN_UNDEF || sym->st_value == 0) continue;
        if (sym->st_name >= names->sh_size || names->sh_offset + names->sh_size > b.size()) continue;
        const char* name = b.data() + names->sh_offset + sym->st_name;
        const size_t length = strnlen(name, names->sh_size - sym->st_name);
        if (length == 0) continue;
        const std::string_view text(name, length);
        const int bind = ELF64_ST_BIND(sym->st_info);
        const int preference = (text.find('@') == std::string_view::npos ? 2 : 0) + (bind != STB_LOCAL ? 1 : 0);
        functions_.push_back({sym->st_value, sym->st_size, text, preference});
      }
    }
    return functions_.size() > before;
  }

  MappedFile file_;
  std::unique_ptr<MappedFile> debug_;
  std::vector<Segment> segments_;
  std::vector<Function> functions_;
};

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

const ElfFile* Symbolizer::file(const std::string& path) {
  auto [it, added] = files_.try_emplace(path);
  // Only real files: "[vdso]", "[anon:...]" and memory-only code have no ELF file to read.
  if (added && !path.empty() && path.front() == '/') it->second = ElfFile::open(path);
  return it->second.get();
}

Symbolizer::Frame Symbolizer::resolve(const std::vector<MappedModule>& modules, uint64_t pc, bool return_address) {
  Frame frame{fmt::format("0x{:x}", pc), "[unknown]", false};
  const uint64_t lookup = return_address && pc > 0 ? pc - 1 : pc;
  auto it = std::upper_bound(modules.begin(), modules.end(), lookup,
                             [](uint64_t a, const MappedModule& m) { return a < m.start; });
  if (it == modules.begin()) return frame;
  const MappedModule& m = *std::prev(it);
  if (lookup >= m.end) return frame;
  frame.module = m.path.empty() ? "[anonymous]" : m.path;
  const ElfFile* elf = file(m.path);
  if (elf == nullptr) return frame;
  const std::optional<uint64_t> address = elf->address_of_offset(lookup - m.start + m.offset);
  if (!address) return frame;
  const std::string_view mangled = elf->function_at(*address);
  if (mangled.empty()) return frame;
  auto [name, added] = demangled_.try_emplace(std::string(mangled));
  if (added) {
    int status = 0;
    char* text = abi::__cxa_demangle(name->first.c_str(), nullptr, nullptr, &status);
    name->second = status == 0 && text != nullptr ? text : name->first;
    std::free(text);
  }
  frame.symbol = name->second;
  frame.resolved = true;
  return frame;
}

}  // namespace tracedoc
