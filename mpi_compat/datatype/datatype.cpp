/// \file
/// The datatype object: creation, reference counting, names, commit and lazily compiled plans.
#include "mpi_compat/datatype/datatype.hpp"

#include <cstring>

#include "mpi_compat/datatype/plan.hpp"

namespace mpc::mpi {

datatype* datatype::create(definition&& def) {
    auto* t = new datatype;
    t->b_ = def.bounds;
    t->kind_ = def.kind;
    t->ints_ = std::move(def.ints);
    t->aints_ = std::move(def.aints);
    t->types_ = std::move(def.types);
    t->impl_ = def.impl;
    for (const datatype* c : t->types_) {
        c->retain();
    }
    if (t->impl_) {
        t->impl_->retain();
    }
    return t;
}

const datatype* datatype::create_f90(combiner kind, std::vector<int> ints, const datatype& base) {
    auto* t = new datatype;
    t->b_ = base.b_;
    t->kind_ = kind;
    t->predefined_index_ = base.predefined_index_;
    t->ints_ = std::move(ints);
    t->committed_.store(true, std::memory_order_relaxed);
    base.get_name(t->name_);
    return t;
}

datatype::~datatype() {
    delete plan_.load(std::memory_order_relaxed);
    delete typed_plan_.load(std::memory_order_relaxed);
    for (const datatype* c : types_) {
        release(c);
    }
    release(impl_);
}

void datatype::retain() const noexcept {
    if (predefined_index_ == 0) {
        refs_.fetch_add(1, std::memory_order_relaxed);
    }
}

void datatype::release(const datatype* t) noexcept {
    if (t == nullptr || t->predefined_index_ != 0) {
        return;
    }
    if (t->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        delete t;
    }
}

void datatype::set_name(const char* name) const noexcept {
    spin_guard g(name_lock_);
    std::strncpy(name_, name ? name : "", sizeof name_ - 1);
    name_[sizeof name_ - 1] = '\0';
}

int datatype::get_name(char* buf) const noexcept {
    spin_guard g(name_lock_);
    std::memcpy(buf, name_, sizeof name_);
    return int(std::strlen(buf));
}

const plan& datatype::compile(std::atomic<const plan*>& slot, bool typed) const {
    if (const plan* p = slot.load(std::memory_order_acquire)) {
        return *p;
    }
    std::lock_guard<std::mutex> g(compile_lock_);
    if (const plan* p = slot.load(std::memory_order_relaxed)) {
        return *p;
    }
    const plan* p = compile_plan(*this, typed).release();
    slot.store(p, std::memory_order_release);
    return *p;
}

const plan& datatype::layout() const { return compile(plan_, false); }

const plan& datatype::typed_layout() const { return compile(typed_plan_, true); }

bool datatype::compute_contiguous() const {
    bool c = layout().contiguous;
    contig_.store(c ? 1 : 0, std::memory_order_relaxed);
    return c;
}

status datatype::commit() const noexcept {
    try {
        (void)layout();
    } catch (const std::bad_alloc&) {
        return {errc::no_memory, "compiling a datatype's copy plan"};
    }
    committed_.store(true, std::memory_order_release);
    return {};
}

}  // namespace mpc::mpi
