// Names for the code addresses a capture's CPU samples and OS-call stacks record: the function and
// the binary each address lies in, read from the program's ELF files once it has ended (the
// recorder only writes addresses and the process's executable mappings, so the program pays nothing
// for symbols; ingest/capture_reader.h's symbolize_capture).
//
// An address is found in the mapping that holds it (/proc/PID/maps as recorded: start, end, file
// offset, path), turned into the file's own virtual address through the program header that loads
// that offset, and looked up in the file's function symbols: .symtab when the file keeps it, else the
// detached debug file Debian's -dbgsym packages install (/usr/lib/debug/.build-id/xx/yyyy.debug),
// else .dynsym (the exported functions, which libpython's and libtorch's hot paths are). C++ names
// are demangled, as nsys writes them. An address no symbol covers is named by its hex value, as nsys
// names an unresolved frame ("0x7ffa0091346a"), with its module.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tracedoc {

// An executable mapping of a process.
struct MappedModule {
  uint64_t start = 0, end = 0, offset = 0;
  std::string path;  // "[vdso]" and the like for mappings without a file
};

class ElfFile;

class Symbolizer {
 public:
  struct Frame {
    std::string symbol;  // the function, demangled; "0x..." when unresolved
    std::string module;  // the mapping's path; "[unknown]" when no mapping holds the address
    bool resolved = false;
  };
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // `modules` sorted by start. A return address (every frame of a stack but the innermost) is
  // looked up one byte earlier: the call that it returns from, which may be the function's last
  // instruction.
  Frame resolve(const std::vector<MappedModule>& modules, uint64_t pc, bool return_address);
  // How many distinct files it looked at.
  size_t files_opened() const { return files_.size(); }

 private:
  const ElfFile* file(const std::string& path);
  std::map<std::string, std::unique_ptr<ElfFile>> files_;  // null: not a readable ELF file
  std::unordered_map<std::string, std::string> demangled_;
};

}  // namespace tracedoc
