// Test helper: sets (or unsets) an environment variable for a scope.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace mpc::test {

/// Sets (or unsets, with nullptr) an environment variable for the scope, then restores it.
class env_guard {
public:
    env_guard(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = std::string(old);
        }
        if (value != nullptr) {
            ::setenv(name, value, 1);
        } else {
            ::unsetenv(name);
        }
    }
    ~env_guard() {
        if (old_) {
            ::setenv(name_, old_->c_str(), 1);
        } else {
            ::unsetenv(name_);
        }
    }
    env_guard(const env_guard&) = delete;
    env_guard& operator=(const env_guard&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};


}  // namespace mpc::test
