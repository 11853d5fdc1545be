/// \file
/// A minimal ELF loader for x86-64: maps private copies of one program image, each at its own
/// address, relocated and ready to run. It is how every MPI rank gets its own copy of the
/// program's global and static variables (DESIGN.md decision 3; docs/privatization.md).
///
/// The image is an ELF shared object (ET_DYN) built by mpc_cc: position-independent code,
/// linked -shared -Bsymbolic. Its dependencies (libc, libmpc, libstdc++, ...) are loaded once,
/// by the dynamic linker, and shared by every copy: the image's undefined symbols are resolved
/// once, through a callback, and each copy gets the same addresses. Symbols the image defines
/// are bound to the copy's own definitions, so its code, data, GOT and TLS template are its
/// own; text pages are mapped from the file and shared by all copies in the page cache.
///
/// Position-independent executables (PIE, what CMake's FindMPI builds with the plain compiler)
/// load too: their COPY relocations give each copy its own copy of the library variable,
/// initialized from the live one at load time (stdout, environ...), as the dynamic linker does
/// for the one executable of a process.
///
/// Supported: PT_LOAD segments, PT_GNU_RELRO, PT_TLS (general and local dynamic models: the
/// copy's DTPMOD64 slots hold a module value chosen by the caller, whose __tls_get_addr
/// replacement serves it), RELA relocations RELATIVE, 64, GLOB_DAT, JUMP_SLOT, IRELATIVE,
/// COPY, DTPMOD64 and DTPOFF64 for the image's own TLS, symbol versions (DT_VERSYM /
/// DT_VERNEED), GNU IFUNC symbols, DT_INIT / DT_INIT_ARRAY / DT_FINI_ARRAY / DT_FINI. Refused,
/// with the reason: other machines or classes, text relocations, initial-exec or local-exec TLS
/// (TPOFF relocations, or a PIE with thread-local variables: the linker fixed their offsets from
/// the thread pointer), thread-local variables of other modules, REL-format or unknown
/// relocations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mpc::elf {

/// An undefined symbol of the image, for the resolver.
struct symbol_ref {
    const char* name;
    const char* version;  ///< required version (DT_VERNEED), or nullptr
    bool weak;            ///< unresolved is allowed (the copy sees 0)
    bool function;        ///< STT_FUNC (or untyped): a code address is expected
};

/// The image's thread-local storage template (PT_TLS); size 0 when the image has none.
struct tls_template {
    std::uintptr_t vaddr = 0;  ///< initial data at bias + vaddr in each copy (relocated there)
    std::size_t filesz = 0;    ///< bytes of initial data; the rest of size is zero
    std::size_t size = 0;
    std::size_t align = 1;
};

class image;

/// One mapped and relocated copy of an image.
class copy {
public:
    copy(const copy&) = delete;
    copy& operator=(const copy&) = delete;
    ~copy();  ///< leaves the mapping in place: the copy lives as long as the process

    std::uintptr_t bias() const noexcept { return bias_; }
    std::uintptr_t lo() const noexcept { return lo_; }  ///< first mapped address
    std::uintptr_t hi() const noexcept { return hi_; }  ///< end of the mapping
    /// Address in this copy of a defined dynamic symbol of the image, or nullptr.
    void* symbol(const char* name) const noexcept;
    /// Start of the copy's .eh_frame (from PT_GNU_EH_FRAME), or nullptr.
    void* eh_frame() const noexcept { return eh_frame_; }
    /// Runs DT_INIT then DT_INIT_ARRAY (constructors), with the arguments of main.
    void run_init(int argc, char** argv, char** envp) const;
    /// Runs DT_FINI_ARRAY in reverse, then DT_FINI (destructors).
    void run_fini() const;

private:
    friend class image;
    copy() = default;
    const image* img_ = nullptr;
    std::uintptr_t bias_ = 0, lo_ = 0, hi_ = 0;
    void* eh_frame_ = nullptr;
};

class image {
public:
    /// Opens `path` and checks that it can be loaded (nullptr and `err` set otherwise).
    static std::unique_ptr<image> open(const char* path, std::string& err);
    ~image();
    image(const image&) = delete;
    image& operator=(const image&) = delete;

    using resolver = void* (*)(const symbol_ref& s, void* ctx);
    /// Resolves the undefined symbols the relocations need, once for every copy; false (and
    /// `err` naming the symbols) when a non-weak one resolves to nullptr.
    bool resolve(resolver fn, void* ctx, std::string& err);

    /// Bytes of address space a copy takes (a multiple of the page size).
    std::size_t span() const noexcept { return span_; }
    const tls_template& tls() const noexcept { return tls_; }
    const std::string& path() const noexcept { return path_; }
    /// Whether the image defines `name` in its dynamic symbol table.
    bool defines(const char* name) const noexcept { return find_defined(name) != nullptr; }

    /// Maps a copy at `at` (span() bytes of address space, page aligned, which the copy
    /// replaces with its own mappings) or, with at == 0, wherever the kernel chooses; applies
    /// the relocations; `tls_module` is written into the copy's DTPMOD64 slots. nullptr and
    /// `err` on failure (the address range is then left PROT_NONE).
    std::unique_ptr<copy> map(std::uintptr_t at, std::uint64_t tls_module, std::string& err) const;

private:
    struct segment {
        std::uintptr_t vaddr, memsz, offset, filesz;
        int prot;
    };
    struct reloc {
        std::uint64_t offset;
        std::uint32_t type;
        std::uint32_t sym;
        std::int64_t addend;
    };
    struct dynsym {
        const char* name;
        std::uint64_t value;
        std::uint64_t size;
        std::uint16_t shndx;
        std::uint8_t type, bind;
    };
    image() = default;
    bool parse(std::string& err);
    const dynsym* find_defined(const char* name) const noexcept;
    std::uintptr_t symbol_value(const copy& c, std::uint32_t sym) const;

    std::string path_;
    int fd_ = -1;
    const unsigned char* file_ = nullptr;  ///< the whole file, mapped read-only
    std::size_t file_size_ = 0;
    std::uintptr_t min_vaddr_ = 0;
    std::size_t span_ = 0;
    std::vector<segment> segs_;
    std::uintptr_t relro_vaddr_ = 0, relro_size_ = 0;
    std::uintptr_t eh_frame_hdr_ = 0;
    tls_template tls_;
    std::vector<dynsym> syms_;
    std::vector<reloc> relocs_;
    std::vector<const char*> versions_;      ///< per dynsym index: required version, or nullptr
    std::vector<std::uintptr_t> resolved_;  ///< per dynsym index: external address (resolve())
    std::vector<bool> copied_;  ///< per dynsym index: target of a COPY relocation
    bool resolved_ok_ = false;
    std::uintptr_t init_ = 0, init_array_ = 0, fini_ = 0, fini_array_ = 0;
    std::size_t init_array_n_ = 0, fini_array_n_ = 0;
    friend class copy;
};

}  // namespace mpc::elf
