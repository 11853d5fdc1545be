/// \file
/// ELF inspection for mpc_run (see program_check.hpp).

#include "tools/program_check.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string_view>

namespace mpc::tools {

namespace {

/// A read-only mapping of a whole file; empty when the file cannot be read.
class mapped_file {
public:
    explicit mapped_file(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return;
        }
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                data_ = static_cast<const unsigned char*>(p);
                size_ = static_cast<std::size_t>(st.st_size);
            }
        }
        ::close(fd);
    }
    ~mapped_file() {
        if (data_ != nullptr) {
            ::munmap(const_cast<unsigned char*>(data_), size_);
        }
    }
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;

    std::size_t size() const noexcept { return size_; }
    const unsigned char* data() const noexcept { return data_; }

    /// True when [offset, offset + count * each) lies inside the file (no overflow).
    bool holds(std::uint64_t offset, std::uint64_t count, std::uint64_t each) const noexcept {
        if (offset > size_ || (each != 0 && count > (size_ - offset) / each)) {
            return false;
        }
        return true;
    }

private:
    const unsigned char* data_ = nullptr;
    std::size_t size_ = 0;
};

/// The sections of a 64-bit little-endian ELF file, bounds-checked.
struct elf_view {
    const mapped_file& file;
    const Elf64_Shdr* sections = nullptr;
    std::uint64_t count = 0;

    /// The NUL-terminated string at `offset` of string-table section `index`, or empty.
    std::string_view string_at(std::uint32_t index, std::uint64_t offset) const noexcept {
        if (index >= count || sections[index].sh_type != SHT_STRTAB) {
            return {};
        }
        const Elf64_Shdr& s = sections[index];
        if (!file.holds(s.sh_offset, s.sh_size, 1) || offset >= s.sh_size) {
            return {};
        }
        const char* begin = reinterpret_cast<const char*>(file.data() + s.sh_offset + offset);
        const std::size_t max = static_cast<std::size_t>(s.sh_size - offset);
        return {begin, ::strnlen(begin, max)};
    }

    /// The entries of section `s` as an array of T (checked), with their number in `n`.
    template <typename T>
    const T* entries(const Elf64_Shdr& s, std::uint64_t* n) const noexcept {
        *n = 0;
        if (s.sh_entsize != sizeof(T) || !file.holds(s.sh_offset, s.sh_size / sizeof(T), sizeof(T)) ||
            s.sh_offset % alignof(T) != 0) {
            return nullptr;
        }
        *n = s.sh_size / sizeof(T);
        return reinterpret_cast<const T*>(file.data() + s.sh_offset);
    }
};

bool defines_symbol(const elf_view& elf, std::string_view name) {
    for (std::uint64_t i = 0; i < elf.count; ++i) {
        const Elf64_Shdr& s = elf.sections[i];
        if (s.sh_type != SHT_SYMTAB && s.sh_type != SHT_DYNSYM) {
            continue;
        }
        std::uint64_t n = 0;
        const Elf64_Sym* syms = elf.entries<Elf64_Sym>(s, &n);
        for (std::uint64_t k = 0; syms != nullptr && k < n; ++k) {
            if (syms[k].st_shndx != SHN_UNDEF && elf.string_at(s.sh_link, syms[k].st_name) == name) {
                return true;
            }
        }
    }
    return false;
}

bool needs_library(const elf_view& elf, std::string_view soname) {
    for (std::uint64_t i = 0; i < elf.count; ++i) {
        const Elf64_Shdr& s = elf.sections[i];
        if (s.sh_type != SHT_DYNAMIC) {
            continue;
        }
        std::uint64_t n = 0;
        const Elf64_Dyn* dyn = elf.entries<Elf64_Dyn>(s, &n);
        for (std::uint64_t k = 0; dyn != nullptr && k < n && dyn[k].d_tag != DT_NULL; ++k) {
            if (dyn[k].d_tag == DT_NEEDED && elf.string_at(s.sh_link, dyn[k].d_un.d_val) == soname) {
                return true;
            }
        }
    }
    return false;
}

program_info other(const char* why) { return {program_kind::other, why}; }

}  // namespace

program_info inspect_program(const std::string& path, const char* libmpc_soname) {
    mapped_file file(path);
    if (file.data() == nullptr) {
        return other("an empty or unreadable file");
    }
    const unsigned char* d = file.data();
    if (file.size() >= 2 && d[0] == '#' && d[1] == '!') {
        const void* nl = std::memchr(d, '\n', file.size() < 256 ? file.size() : 256);
        const std::size_t len = nl != nullptr ? static_cast<std::size_t>(static_cast<const unsigned char*>(nl) - d)
                                              : (file.size() < 256 ? file.size() : 256);
        return {program_kind::script, std::string(reinterpret_cast<const char*>(d), len)};
    }
    if (file.size() < sizeof(Elf64_Ehdr) || std::memcmp(d, ELFMAG, SELFMAG) != 0) {
        return other("not an ELF file");
    }
    Elf64_Ehdr eh;
    std::memcpy(&eh, d, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
        return other("not a 64-bit little-endian ELF file");
    }
    if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff % alignof(Elf64_Shdr) != 0 ||
        !file.holds(eh.e_shoff, 1, sizeof(Elf64_Shdr))) {
        return other("an ELF file without section headers");
    }
    elf_view elf{file, reinterpret_cast<const Elf64_Shdr*>(d + eh.e_shoff), eh.e_shnum};
    if (elf.count == 0) {  // more than SHN_LORESERVE sections: the count is in section 0
        elf.count = elf.sections[0].sh_size;
    }
    if (!file.holds(eh.e_shoff, elf.count, sizeof(Elf64_Shdr))) {
        return other("a truncated ELF file");
    }
    if (defines_symbol(elf, mpc_marker_symbol)) {
        return {program_kind::mpi, {}};
    }
    if (libmpc_soname != nullptr && needs_library(elf, libmpc_soname)) {
        return {program_kind::engine, {}};
    }
    return other("its ELF symbol tables lack the start-up marker");
}

}  // namespace mpc::tools
