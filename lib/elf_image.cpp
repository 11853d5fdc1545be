/// \file
/// The ELF loader of lib/elf_image.hpp.

#include "lib/elf_image.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mpc::elf {
namespace {

constexpr std::uintptr_t page = 4096;
std::uintptr_t trunc_page(std::uintptr_t v) { return v & ~(page - 1); }
std::uintptr_t round_page(std::uintptr_t v) { return (v + page - 1) & ~(page - 1); }

int prot_of(std::uint32_t flags) {
    return ((flags & PF_R) != 0 ? PROT_READ : 0) | ((flags & PF_W) != 0 ? PROT_WRITE : 0) |
           ((flags & PF_X) != 0 ? PROT_EXEC : 0);
}

std::string sys_error(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

/// Reads a DWARF-encoded pointer of .eh_frame_hdr (the encodings linkers use there).
bool read_encoded(const unsigned char* p, unsigned enc, std::uintptr_t& out) {
    std::uintptr_t v = 0;
    switch (enc & 0x0f) {
        case 0x03: {  // udata4
            std::uint32_t x;
            std::memcpy(&x, p, 4);
            v = x;
            break;
        }
        case 0x0b: {  // sdata4
            std::int32_t x;
            std::memcpy(&x, p, 4);
            v = static_cast<std::uintptr_t>(static_cast<std::intptr_t>(x));
            break;
        }
        case 0x04:    // udata8
        case 0x0c: {  // sdata8
            std::uint64_t x;
            std::memcpy(&x, p, 8);
            v = x;
            break;
        }
        default:
            return false;
    }
    switch (enc & 0x70) {
        case 0x00:  // absptr
            break;
        case 0x10:  // pcrel
            v += reinterpret_cast<std::uintptr_t>(p);
            break;
        default:
            return false;
    }
    out = v;
    return true;
}

}  // namespace

// ---- image ----------------------------------------------------------------------------------

std::unique_ptr<image> image::open(const char* path, std::string& err) {
    std::unique_ptr<image> im(new image());
    im->path_ = path;
    im->fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
    if (im->fd_ < 0) {
        err = sys_error("cannot open it");
        return nullptr;
    }
    struct stat st;
    if (::fstat(im->fd_, &st) != 0) {
        err = sys_error("cannot stat it");
        return nullptr;
    }
    if (st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
        err = "not an ELF file (too short)";
        return nullptr;
    }
    im->file_size_ = static_cast<std::size_t>(st.st_size);
    void* m = ::mmap(nullptr, im->file_size_, PROT_READ, MAP_PRIVATE, im->fd_, 0);
    if (m == MAP_FAILED) {
        err = sys_error("cannot map it");
        return nullptr;
    }
    im->file_ = static_cast<const unsigned char*>(m);
    if (!im->parse(err)) {
        return nullptr;
    }
    return im;
}

image::~image() {
    if (file_ != nullptr) {
        ::munmap(const_cast<unsigned char*>(file_), file_size_);
    }
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

bool image::parse(std::string& err) {
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file_);
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
        err = "not an ELF file";
        return false;
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64) {
        err = "not an x86-64 ELF file";
        return false;
    }
    if (eh->e_type != ET_DYN) {
        err = "not position-independent (ELF type is not ET_DYN): link it with mpc_cc";
        return false;
    }
    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > file_size_ ||
        file_size_ - eh->e_phoff < std::size_t{eh->e_phnum} * sizeof(Elf64_Phdr)) {
        err = "corrupt ELF file (program headers)";
        return false;
    }
    const auto* ph = reinterpret_cast<const Elf64_Phdr*>(file_ + eh->e_phoff);
    const Elf64_Phdr* dyn_ph = nullptr;
    std::uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < eh->e_phnum; ++i) {
        const Elf64_Phdr& p = ph[i];
        switch (p.p_type) {
            case PT_LOAD:
                if (p.p_filesz > p.p_memsz || p.p_offset > file_size_ || file_size_ - p.p_offset < p.p_filesz ||
                    p.p_vaddr % page != p.p_offset % page) {
                    err = "corrupt ELF file (PT_LOAD segment)";
                    return false;
                }
                segs_.push_back({p.p_vaddr, p.p_memsz, p.p_offset, p.p_filesz, prot_of(p.p_flags)});
                lo = std::min<std::uintptr_t>(lo, trunc_page(p.p_vaddr));
                hi = std::max<std::uintptr_t>(hi, round_page(p.p_vaddr + p.p_memsz));
                break;
            case PT_DYNAMIC:
                dyn_ph = &p;
                break;
            case PT_GNU_RELRO:
                relro_vaddr_ = p.p_vaddr;
                relro_size_ = p.p_memsz;
                break;
            case PT_TLS:
                tls_ = {p.p_vaddr, p.p_filesz, p.p_memsz, p.p_align != 0 ? p.p_align : 1};
                break;
            case PT_GNU_EH_FRAME:
                eh_frame_hdr_ = p.p_vaddr;
                break;
            default:
                break;
        }
    }
    if (segs_.empty() || dyn_ph == nullptr) {
        err = "not a dynamically linked program (no PT_LOAD or PT_DYNAMIC): link it with mpc_cc";
        return false;
    }
    min_vaddr_ = lo;
    span_ = hi - lo;

    // The file bytes of [vaddr, vaddr + n), or nullptr when not all inside one segment's file part.
    auto at = [&](std::uintptr_t vaddr, std::size_t n) -> const unsigned char* {
        for (const segment& s : segs_) {
            if (vaddr >= s.vaddr && vaddr - s.vaddr <= s.filesz && s.filesz - (vaddr - s.vaddr) >= n) {
                return file_ + s.offset + (vaddr - s.vaddr);
            }
        }
        return nullptr;
    };
    if (dyn_ph->p_offset > file_size_ || file_size_ - dyn_ph->p_offset < dyn_ph->p_filesz) {
        err = "corrupt ELF file (PT_DYNAMIC)";
        return false;
    }
    const auto* dyn = reinterpret_cast<const Elf64_Dyn*>(file_ + dyn_ph->p_offset);
    std::size_t ndyn = dyn_ph->p_filesz / sizeof(Elf64_Dyn);
    std::uintptr_t strtab = 0, symtab = 0, rela = 0, jmprel = 0, versym = 0, verneed = 0, gnu_hash = 0, hash = 0;
    std::size_t strsz = 0, relasz = 0, pltrelsz = 0, verneednum = 0;
    std::int64_t pltrel = DT_RELA;
    bool pie = false;
    for (std::size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; ++i) {
        const std::uint64_t v = dyn[i].d_un.d_val;
        switch (dyn[i].d_tag) {
            case DT_STRTAB: strtab = v; break;
            case DT_STRSZ: strsz = v; break;
            case DT_SYMTAB: symtab = v; break;
            case DT_RELA: rela = v; break;
            case DT_RELASZ: relasz = v; break;
            case DT_JMPREL: jmprel = v; break;
            case DT_PLTRELSZ: pltrelsz = v; break;
            case DT_PLTREL: pltrel = static_cast<std::int64_t>(v); break;
            case DT_VERSYM: versym = v; break;
            case DT_VERNEED: verneed = v; break;
            case DT_VERNEEDNUM: verneednum = v; break;
            case DT_GNU_HASH: gnu_hash = v; break;
            case DT_HASH: hash = v; break;
            case DT_INIT: init_ = v; break;
            case DT_FINI: fini_ = v; break;
            case DT_INIT_ARRAY: init_array_ = v; break;
            case DT_INIT_ARRAYSZ: init_array_n_ = v / sizeof(std::uint64_t); break;
            case DT_FINI_ARRAY: fini_array_ = v; break;
            case DT_FINI_ARRAYSZ: fini_array_n_ = v / sizeof(std::uint64_t); break;
            case DT_REL:
                err = "uses REL relocations (not x86-64 RELA): link it with mpc_cc";
                return false;
            case DT_TEXTREL:
                err = "has text relocations (code compiled without -fPIC): compile every object with mpc_cc";
                return false;
            case DT_FLAGS_1:
                pie = (v & DF_1_PIE) != 0;
                break;
            case DT_FLAGS:
                if ((v & DF_TEXTREL) != 0) {
                    err = "has text relocations (code compiled without -fPIC): compile every object with mpc_cc";
                    return false;
                }
                if ((v & DF_STATIC_TLS) != 0) {
                    err = "uses initial-exec thread-local storage (fixed offsets from the thread pointer cannot be "
                          "given one copy per rank): compile every object with mpc_cc, without -ftls-model";
                    return false;
                }
                break;
            default:
                break;
        }
    }
    const auto* str = reinterpret_cast<const char*>(at(strtab, strsz));
    if (str == nullptr || strsz == 0 || symtab == 0) {
        err = "corrupt ELF file (no dynamic string or symbol table)";
        return false;
    }
    if (pie && tls_.size != 0) {
        err = "has thread-local variables and was linked as a position-independent executable (PIE), whose "
              "thread-local accesses the linker fixed as offsets from the thread pointer: they cannot be given one "
              "copy per rank. Link it with mpc_cc (CMake: CC=mpc_cc CXX=mpc_cxx), or with -fno-mpc-privatize";
        return false;
    }
    if (pltrel != DT_RELA && pltrelsz != 0) {
        err = "uses REL relocations (not x86-64 RELA): link it with mpc_cc";
        return false;
    }

    // Number of dynamic symbols: DT_HASH says it; with only DT_GNU_HASH, walk the last chain.
    std::size_t nsyms = 0;
    if (hash != 0) {
        const auto* h = reinterpret_cast<const std::uint32_t*>(at(hash, 8));
        if (h == nullptr) {
            err = "corrupt ELF file (DT_HASH)";
            return false;
        }
        nsyms = h[1];
    } else if (gnu_hash != 0) {
        const auto* h = reinterpret_cast<const std::uint32_t*>(at(gnu_hash, 16));
        if (h == nullptr) {
            err = "corrupt ELF file (DT_GNU_HASH)";
            return false;
        }
        const std::uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
        const std::uintptr_t buckets_at = gnu_hash + 16 + std::uintptr_t{bloom} * 8;
        const auto* buckets = reinterpret_cast<const std::uint32_t*>(at(buckets_at, std::size_t{nbuckets} * 4));
        if (buckets == nullptr) {
            err = "corrupt ELF file (DT_GNU_HASH)";
            return false;
        }
        std::uint32_t last = 0;
        for (std::uint32_t b = 0; b < nbuckets; ++b) {
            last = std::max(last, buckets[b]);
        }
        if (last < symoffset) {
            nsyms = symoffset;
        } else {
            const std::uintptr_t chains_at = buckets_at + std::uintptr_t{nbuckets} * 4;
            for (;;) {
                const auto* c = reinterpret_cast<const std::uint32_t*>(at(chains_at + std::uintptr_t{last - symoffset} * 4, 4));
                if (c == nullptr) {
                    err = "corrupt ELF file (DT_GNU_HASH chains)";
                    return false;
                }
                if ((*c & 1) != 0) {
                    break;
                }
                ++last;
            }
            nsyms = std::size_t{last} + 1;
        }
    } else {
        err = "corrupt ELF file (no DT_HASH or DT_GNU_HASH)";
        return false;
    }
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(at(symtab, nsyms * sizeof(Elf64_Sym)));
    if (sym == nullptr) {
        err = "corrupt ELF file (dynamic symbol table)";
        return false;
    }
    syms_.resize(nsyms);
    for (std::size_t i = 0; i < nsyms; ++i) {
        if (sym[i].st_name >= strsz) {
            err = "corrupt ELF file (symbol name)";
            return false;
        }
        syms_[i] = {str + sym[i].st_name, sym[i].st_value, sym[i].st_size, sym[i].st_shndx,
                    static_cast<std::uint8_t>(ELF64_ST_TYPE(sym[i].st_info)),
                    static_cast<std::uint8_t>(ELF64_ST_BIND(sym[i].st_info))};
    }

    // Relocations.
    auto add_relocs = [&](std::uintptr_t table, std::size_t bytes) -> bool {
        if (bytes == 0) {
            return true;
        }
        const auto* r = reinterpret_cast<const Elf64_Rela*>(at(table, bytes));
        if (r == nullptr) {
            err = "corrupt ELF file (relocation table)";
            return false;
        }
        for (std::size_t i = 0; i < bytes / sizeof(Elf64_Rela); ++i) {
            const auto type = static_cast<std::uint32_t>(ELF64_R_TYPE(r[i].r_info));
            const auto s = static_cast<std::uint32_t>(ELF64_R_SYM(r[i].r_info));
            if (s >= nsyms) {
                err = "corrupt ELF file (relocation symbol)";
                return false;
            }
            relocs_.push_back({r[i].r_offset, type, s, r[i].r_addend});
        }
        return true;
    };
    if (!add_relocs(rela, relasz) || !add_relocs(jmprel, pltrelsz)) {
        return false;
    }
    // Check every relocation now, so that map() cannot fail half-way for these reasons.
    for (const reloc& r : relocs_) {
        switch (r.type) {
            case R_X86_64_NONE:
            case R_X86_64_RELATIVE:
            case R_X86_64_64:
            case R_X86_64_GLOB_DAT:
            case R_X86_64_JUMP_SLOT:
            case R_X86_64_IRELATIVE:
                break;
            case R_X86_64_COPY:
                if (r.sym == 0 || syms_[r.sym].shndx == SHN_UNDEF) {
                    err = "corrupt ELF file (COPY relocation)";
                    return false;
                }
                break;
            case R_X86_64_DTPMOD64:
            case R_X86_64_DTPOFF64:
                if (r.sym != 0 && syms_[r.sym].shndx == SHN_UNDEF) {
                    err = std::string("uses the thread-local variable '") + syms_[r.sym].name +
                          "' of another library (not supported in privatized programs)";
                    return false;
                }
                break;
            case R_X86_64_TPOFF64:
            case R_X86_64_TPOFF32:
                err = "uses initial-exec or local-exec thread-local storage (fixed offsets from the thread pointer "
                      "cannot be given one copy per rank): compile every object with mpc_cc, without -ftls-model";
                return false;
            default:
                err = "uses relocation type " + std::to_string(r.type) + ", which the MPC loader does not handle";
                return false;
        }
        bool writable = false;
        for (const segment& s : segs_) {
            if ((s.prot & PROT_WRITE) != 0 && r.offset >= s.vaddr && r.offset + 8 <= s.vaddr + s.memsz) {
                writable = true;
            }
        }
        if (!writable && r.type != R_X86_64_NONE) {
            err = "has text relocations (code compiled without -fPIC): compile every object with mpc_cc";
            return false;
        }
    }

    // Symbol versions of the undefined symbols: version index -> name.
    std::vector<const char*> version_names;
    if (verneed != 0) {
        std::uintptr_t vn = verneed;
        for (std::size_t k = 0; k < verneednum; ++k) {
            const auto* need = reinterpret_cast<const Elf64_Verneed*>(at(vn, sizeof(Elf64_Verneed)));
            if (need == nullptr) {
                err = "corrupt ELF file (DT_VERNEED)";
                return false;
            }
            std::uintptr_t va = vn + need->vn_aux;
            for (unsigned j = 0; j < need->vn_cnt; ++j) {
                const auto* aux = reinterpret_cast<const Elf64_Vernaux*>(at(va, sizeof(Elf64_Vernaux)));
                if (aux == nullptr || aux->vna_name >= strsz) {
                    err = "corrupt ELF file (DT_VERNEED)";
                    return false;
                }
                const std::size_t idx = aux->vna_other & 0x7fff;
                if (version_names.size() <= idx) {
                    version_names.resize(idx + 1, nullptr);
                }
                version_names[idx] = str + aux->vna_name;
                va += aux->vna_next;
            }
            if (need->vn_next == 0) {
                break;
            }
            vn += need->vn_next;
        }
    }
    versions_.assign(nsyms, nullptr);
    if (versym != 0) {
        const auto* vs = reinterpret_cast<const std::uint16_t*>(at(versym, nsyms * 2));
        if (vs == nullptr) {
            err = "corrupt ELF file (DT_VERSYM)";
            return false;
        }
        for (std::size_t i = 0; i < nsyms; ++i) {
            const std::size_t idx = vs[i] & 0x7fff;
            if (idx >= 2 && idx < version_names.size()) {  // undefined, or a COPY target
                versions_[i] = version_names[idx];
            }
        }
    }
    if (eh_frame_hdr_ != 0 && at(eh_frame_hdr_, 8) == nullptr) {
        eh_frame_hdr_ = 0;
    }
    return true;
}

const image::dynsym* image::find_defined(const char* name) const noexcept {
    for (const dynsym& s : syms_) {
        if (s.shndx != SHN_UNDEF && s.bind != STB_LOCAL && std::strcmp(s.name, name) == 0) {
            return &s;
        }
    }
    return nullptr;
}

bool image::resolve(resolver fn, void* ctx, std::string& err) {
    resolved_.assign(syms_.size(), 0);
    copied_.assign(syms_.size(), false);
    std::vector<bool> needed(syms_.size(), false);
    for (const reloc& r : relocs_) {
        if (r.type == R_X86_64_COPY) {
            copied_[r.sym] = true;  // defined here, but the initial value is the library's
            needed[r.sym] = true;
        } else if (r.sym != 0 && syms_[r.sym].shndx == SHN_UNDEF) {
            needed[r.sym] = true;
        }
    }
    std::string missing;
    int nmissing = 0;
    for (std::size_t i = 0; i < syms_.size(); ++i) {
        if (!needed[i]) {
            continue;
        }
        const dynsym& s = syms_[i];
        symbol_ref ref{s.name, versions_[i], s.bind == STB_WEAK && !copied_[i], s.type == STT_FUNC || s.type == STT_NOTYPE};
        void* p = fn(ref, ctx);
        if (p == nullptr && !ref.weak) {
            if (nmissing++ < 5) {
                missing += missing.empty() ? "" : ", ";
                missing += s.name;
                if (ref.version != nullptr) {
                    missing += std::string("@") + ref.version;
                }
            }
        }
        resolved_[i] = reinterpret_cast<std::uintptr_t>(p);
    }
    if (nmissing != 0) {
        err = "undefined symbol" + std::string(nmissing > 1 ? "s " : " ") + missing + (nmissing > 5 ? ", ..." : "");
        return false;
    }
    resolved_ok_ = true;
    return true;
}

std::uintptr_t image::symbol_value(const copy& c, std::uint32_t sym) const {
    const dynsym& s = syms_[sym];
    if (s.shndx == SHN_UNDEF) {  // (a COPY target resolves to the copy's own definition below)
        return resolved_[sym];
    }
    if (s.shndx == SHN_ABS) {
        return s.value;
    }
    std::uintptr_t v = c.bias_ + s.value;
    if (s.type == STT_GNU_IFUNC) {
        v = reinterpret_cast<std::uintptr_t (*)()>(v)();
    }
    return v;
}

std::unique_ptr<copy> image::map(std::uintptr_t at, std::uint64_t tls_module, std::string& err) const {
    if (!resolved_ok_) {
        err = "internal error: image::map() before resolve()";
        return nullptr;
    }
    void* base = ::mmap(reinterpret_cast<void*>(at), span_, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (at != 0 ? MAP_FIXED : 0), -1, 0);
    if (base == MAP_FAILED) {
        err = sys_error("cannot reserve address space for the copy");
        return nullptr;
    }
    std::unique_ptr<copy> c(new copy());
    c->img_ = this;
    c->lo_ = reinterpret_cast<std::uintptr_t>(base);
    c->hi_ = c->lo_ + span_;
    c->bias_ = c->lo_ - min_vaddr_;
    auto fail = [&](const std::string& why) -> std::unique_ptr<copy> {
        err = why;
        // Give the range back to PROT_NONE (a slice's reservation stays a reservation).
        ::mmap(base, span_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        if (at == 0) {
            ::munmap(base, span_);
        }
        return nullptr;
    };
    for (const segment& s : segs_) {
        const std::uintptr_t start = trunc_page(s.vaddr);
        const std::uintptr_t file_end = s.vaddr + s.filesz;
        const std::uintptr_t mem_end = round_page(s.vaddr + s.memsz);
        std::uintptr_t mapped_end = start;
        if (s.filesz != 0) {
            mapped_end = round_page(file_end);
            void* p = ::mmap(reinterpret_cast<void*>(c->bias_ + start), mapped_end - start, s.prot,
                             MAP_PRIVATE | MAP_FIXED, fd_, static_cast<off_t>(trunc_page(s.offset)));
            if (p == MAP_FAILED) {
                return fail(sys_error("cannot map a segment of the program"));
            }
            if ((s.prot & PROT_WRITE) != 0 && s.memsz > s.filesz && mapped_end > file_end) {
                // .bss starts inside the last file page: zero the rest of that page.
                std::memset(reinterpret_cast<void*>(c->bias_ + file_end), 0, mapped_end - file_end);
            }
        }
        if (mem_end > mapped_end) {
            void* p = ::mmap(reinterpret_cast<void*>(c->bias_ + mapped_end), mem_end - mapped_end, s.prot,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            if (p == MAP_FAILED) {
                return fail(sys_error("cannot map the zero-initialized data of the program"));
            }
        }
    }
    // Relocations: IRELATIVE last (their resolvers may read relocated data, as in ld.so).
    for (int pass = 0; pass < 2; ++pass) {
        for (const reloc& r : relocs_) {
            if ((r.type == R_X86_64_IRELATIVE) != (pass == 1)) {
                continue;
            }
            auto* where = reinterpret_cast<std::uint64_t*>(c->bias_ + r.offset);
            switch (r.type) {
                case R_X86_64_NONE:
                    break;
                case R_X86_64_RELATIVE:
                    *where = c->bias_ + static_cast<std::uint64_t>(r.addend);
                    break;
                case R_X86_64_64:
                    *where = symbol_value(*c, r.sym) + static_cast<std::uint64_t>(r.addend);
                    break;
                case R_X86_64_GLOB_DAT:
                case R_X86_64_JUMP_SLOT:
                    *where = symbol_value(*c, r.sym);
                    break;
                case R_X86_64_IRELATIVE:
                    *where = reinterpret_cast<std::uint64_t (*)()>(c->bias_ + static_cast<std::uint64_t>(r.addend))();
                    break;
                case R_X86_64_COPY:
                    std::memcpy(where, reinterpret_cast<const void*>(resolved_[r.sym]), syms_[r.sym].size);
                    break;
                case R_X86_64_DTPMOD64:
                    *where = tls_module;
                    break;
                case R_X86_64_DTPOFF64:
                    *where = (r.sym != 0 ? syms_[r.sym].value : 0) + static_cast<std::uint64_t>(r.addend);
                    break;
                default:
                    return fail("internal error: unchecked relocation type");
            }
        }
    }
    if (relro_size_ != 0) {
        const std::uintptr_t lo = trunc_page(c->bias_ + relro_vaddr_);
        const std::uintptr_t hi = trunc_page(c->bias_ + relro_vaddr_ + relro_size_);
        if (hi > lo && ::mprotect(reinterpret_cast<void*>(lo), hi - lo, PROT_READ) != 0) {
            return fail(sys_error("cannot protect the relocated read-only data"));
        }
    }
    if (eh_frame_hdr_ != 0) {
        const auto* hdr = reinterpret_cast<const unsigned char*>(c->bias_ + eh_frame_hdr_);
        std::uintptr_t ef = 0;
        if (hdr[0] == 1 && read_encoded(hdr + 4, hdr[1], ef)) {
            c->eh_frame_ = reinterpret_cast<void*>(ef);
        }
    }
    return c;
}

// ---- copy -----------------------------------------------------------------------------------

copy::~copy() = default;

void* copy::symbol(const char* name) const noexcept {
    const image::dynsym* s = img_->find_defined(name);
    if (s == nullptr) {
        return nullptr;
    }
    return reinterpret_cast<void*>(s->shndx == SHN_ABS ? s->value : bias_ + s->value);
}

void copy::run_init(int argc, char** argv, char** envp) const {
    using init_fn = void (*)(int, char**, char**);
    if (img_->init_ != 0) {
        reinterpret_cast<init_fn>(bias_ + img_->init_)(argc, argv, envp);
    }
    const auto* arr = reinterpret_cast<const std::uintptr_t*>(bias_ + img_->init_array_);
    for (std::size_t i = 0; i < img_->init_array_n_; ++i) {
        if (arr[i] != 0 && arr[i] != ~std::uintptr_t{0}) {
            reinterpret_cast<init_fn>(arr[i])(argc, argv, envp);
        }
    }
}

void copy::run_fini() const {
    using fini_fn = void (*)();
    const auto* arr = reinterpret_cast<const std::uintptr_t*>(bias_ + img_->fini_array_);
    for (std::size_t i = img_->fini_array_n_; i-- > 0;) {
        if (arr[i] != 0 && arr[i] != ~std::uintptr_t{0}) {
            reinterpret_cast<fini_fn>(arr[i])();
        }
    }
    if (img_->fini_ != 0) {
        reinterpret_cast<fini_fn>(bias_ + img_->fini_)();
    }
}

}  // namespace mpc::elf
