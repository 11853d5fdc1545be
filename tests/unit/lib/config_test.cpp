// Configuration knobs (lib/config.hpp) and log-level specs (lib/log.hpp).
//
// Each GoogleTest case runs in its own process under ctest, but the binary may also be run as a
// whole, so every test that sets an MPC_* variable restores it (env_guard).
#include "lib/config.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "lib/log.hpp"
#include "tests/unit/env_guard.hpp"

// A table of our own, so that the getters can be tested independently of other layers' defaults.
MPC_CONFIG_TABLE(cfgtest, {
    {"MPC_CFGTEST_INT", ::mpc::config::knob_type::integer, "17", "test integer"},
    {"MPC_CFGTEST_SIZE", ::mpc::config::knob_type::size, "2k", "test size"},
    {"MPC_CFGTEST_BOOL", ::mpc::config::knob_type::boolean, "on", "test boolean"},
    {"MPC_CFGTEST_STR", ::mpc::config::knob_type::string, "hello", "test string"},
    {"MPC_CFGTEST_CHOICE", ::mpc::config::knob_type::choice, "beta", "test choice", "alpha|beta|gamma"},
    {"MPC_CFGTEST_BADDEF", ::mpc::config::knob_type::integer, "notanumber", "malformed default"},
})

namespace {

using namespace mpc;
using namespace mpc::config;
using mpc::test::env_guard;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;
constexpr std::size_t GiB = 1024 * MiB;

// ---- parse_size -------------------------------------------------------------------------------

struct size_case {
    const char* text;
    std::size_t value;
};

class ParseSizeGood : public ::testing::TestWithParam<size_case> {};

TEST_P(ParseSizeGood, Parses) {
    std::size_t out = 12345;
    ASSERT_TRUE(parse_size(GetParam().text, &out)) << GetParam().text;
    EXPECT_EQ(out, GetParam().value) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(Config, ParseSizeGood,
                         ::testing::Values(size_case{"0", 0}, size_case{"1", 1}, size_case{"65536", 65536},
                                           size_case{"64k", 64 * KiB}, size_case{"64K", 64 * KiB},
                                           size_case{"4kb", 4 * KiB}, size_case{"4KB", 4 * KiB},
                                           size_case{"8M", 8 * MiB}, size_case{"8m", 8 * MiB},
                                           size_case{"1g", GiB}, size_case{"3G", 3 * GiB}, size_case{"12b", 12},
                                           size_case{"12B", 12}, size_case{"16T", 16 * GiB * 1024},
                                           size_case{"2tb", 2 * GiB * 1024},
                                           // the largest multiple of 1 GiB that fits in 64 bits
                                           size_case{"17179869183g", std::size_t{17179869183ULL} * GiB}));

class ParseSizeBad : public ::testing::TestWithParam<const char*> {};

TEST_P(ParseSizeBad, RejectedAndOutputUntouched) {
    std::size_t out = 4242;
    EXPECT_FALSE(parse_size(GetParam(), &out)) << "'" << GetParam() << "'";
    EXPECT_EQ(out, 4242u) << "output must be set only on success";
}

INSTANTIATE_TEST_SUITE_P(Config, ParseSizeBad,
                         ::testing::Values("", "-1", "-64k", "abc", "k", "12x", "64kk", "1.5k", "64 k", "0x10",
                                           "12bb", "99999999999999999999",  // > 2^64
                                           "16777216t",                     // 2^64 bytes
                                           "99999999999999999999g",         // > 2^64 before the suffix
                                           "17179869184g",                  // 2^34 GiB = 2^64: overflows
                                           "18014398509481984k"));           // 2^54 KiB = 2^64

TEST(Config, ParseSizeNull) {
    std::size_t out = 7;
    EXPECT_FALSE(parse_size(nullptr, &out));
    EXPECT_EQ(out, 7u);
}

// ---- parse_int --------------------------------------------------------------------------------

TEST(Config, ParseIntGood) {
    struct {
        const char* text;
        std::int64_t value;
    } cases[] = {
        {"0", 0},
        {"42", 42},
        {"-1", -1},
        {"007", 7},
        {"9223372036854775807", std::numeric_limits<std::int64_t>::max()},
        {"-9223372036854775808", std::numeric_limits<std::int64_t>::min()},
    };
    for (const auto& c : cases) {
        std::int64_t out = 99;
        ASSERT_TRUE(parse_int(c.text, &out)) << c.text;
        EXPECT_EQ(out, c.value) << c.text;
    }
}

TEST(Config, ParseIntBad) {
    for (const char* s : {"", "abc", "12abc", "1.5", "12k", "- 1", "9223372036854775808", "-9223372036854775809",
                          "99999999999999999999"}) {
        std::int64_t out = 99;
        EXPECT_FALSE(parse_int(s, &out)) << "'" << s << "'";
        EXPECT_EQ(out, 99) << "output must be set only on success ('" << s << "')";
    }
    std::int64_t out = 5;
    EXPECT_FALSE(parse_int(nullptr, &out));
    EXPECT_EQ(out, 5);
}

// ---- parse_bool -------------------------------------------------------------------------------

TEST(Config, ParseBoolGood) {
    for (const char* s : {"1", "true", "yes", "on", "TRUE", "Yes", "On"}) {
        bool out = false;
        ASSERT_TRUE(parse_bool(s, &out)) << s;
        EXPECT_TRUE(out) << s;
    }
    for (const char* s : {"0", "false", "no", "off", "FALSE", "No", "OFF"}) {
        bool out = true;
        ASSERT_TRUE(parse_bool(s, &out)) << s;
        EXPECT_FALSE(out) << s;
    }
}

TEST(Config, ParseBoolBad) {
    for (const char* s : {"", "2", "-1", "maybe", "tru", "yess", "o", "enable"}) {
        bool out = true;
        EXPECT_FALSE(parse_bool(s, &out)) << "'" << s << "'";
        EXPECT_TRUE(out) << "output must be set only on success ('" << s << "')";
    }
    bool out = false;
    EXPECT_FALSE(parse_bool(nullptr, &out));
    EXPECT_FALSE(out);
}

// ---- getters on our own table -----------------------------------------------------------------

TEST(Config, RawReturnsEnvironmentOrDefault) {
    {
        env_guard g("MPC_CFGTEST_STR", nullptr);
        ASSERT_NE(raw("MPC_CFGTEST_STR"), nullptr);
        EXPECT_STREQ(raw("MPC_CFGTEST_STR"), "hello");
    }
    {
        env_guard g("MPC_CFGTEST_STR", "world");
        EXPECT_STREQ(raw("MPC_CFGTEST_STR"), "world");
    }
    {
        env_guard g("MPC_CFGTEST_STR", "");  // empty means unset
        EXPECT_STREQ(raw("MPC_CFGTEST_STR"), "hello");
    }
    EXPECT_EQ(raw("MPC_CFGTEST_NO_SUCH_KNOB"), nullptr);
}

TEST(Config, GetIntOwnTable) {
    {
        env_guard g("MPC_CFGTEST_INT", nullptr);
        auto r = get_int("MPC_CFGTEST_INT");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 17);
    }
    {
        env_guard g("MPC_CFGTEST_INT", "-3");
        auto r = get_int("MPC_CFGTEST_INT");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, -3);
    }
    {
        env_guard g("MPC_CFGTEST_INT", "3x");
        auto r = get_int("MPC_CFGTEST_INT");
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code(), errc::invalid_argument);
    }
    // A malformed default is reported too, never replaced by something else.
    auto bad = get_int("MPC_CFGTEST_BADDEF");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code(), errc::invalid_argument);
}

TEST(Config, GetSizeOwnTable) {
    {
        env_guard g("MPC_CFGTEST_SIZE", nullptr);
        auto r = get_size("MPC_CFGTEST_SIZE");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 2 * KiB);
    }
    {
        env_guard g("MPC_CFGTEST_SIZE", "3M");
        auto r = get_size("MPC_CFGTEST_SIZE");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 3 * MiB);
    }
    for (const char* bad : {"-1", "lots", "99999999999999999999g", "1.5k"}) {
        env_guard g("MPC_CFGTEST_SIZE", bad);
        auto r = get_size("MPC_CFGTEST_SIZE");
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().code(), errc::invalid_argument) << bad;
    }
}

TEST(Config, GetBoolOwnTable) {
    {
        env_guard g("MPC_CFGTEST_BOOL", nullptr);
        auto r = get_bool("MPC_CFGTEST_BOOL");
        ASSERT_TRUE(r.ok());
        EXPECT_TRUE(*r);
    }
    {
        env_guard g("MPC_CFGTEST_BOOL", "no");
        auto r = get_bool("MPC_CFGTEST_BOOL");
        ASSERT_TRUE(r.ok());
        EXPECT_FALSE(*r);
    }
    {
        env_guard g("MPC_CFGTEST_BOOL", "perhaps");
        auto r = get_bool("MPC_CFGTEST_BOOL");
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code(), errc::invalid_argument);
    }
}

TEST(Config, GetChoiceOwnTable) {
    {
        env_guard g("MPC_CFGTEST_CHOICE", nullptr);
        auto r = get_choice("MPC_CFGTEST_CHOICE");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 1);  // default "beta"
    }
    const char* names[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; ++i) {
        env_guard g("MPC_CFGTEST_CHOICE", names[i]);
        auto r = get_choice("MPC_CFGTEST_CHOICE");
        ASSERT_TRUE(r.ok()) << names[i];
        EXPECT_EQ(*r, i) << names[i];
    }
    // Prefixes, extensions, case changes and separators are not choices.
    for (const char* bad : {"alp", "alphax", "ALPHA", "alpha|beta", "|", "delta"}) {
        env_guard g("MPC_CFGTEST_CHOICE", bad);
        auto r = get_choice("MPC_CFGTEST_CHOICE");
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().code(), errc::invalid_argument) << bad;
    }
}

TEST(Config, GettersOnUnknownOrMistypedKnobs) {
    EXPECT_FALSE(get_int("MPC_CFGTEST_NOPE").ok());
    EXPECT_FALSE(get_size("MPC_CFGTEST_NOPE").ok());
    EXPECT_FALSE(get_bool("MPC_CFGTEST_NOPE").ok());
    EXPECT_FALSE(get_choice("MPC_CFGTEST_NOPE").ok());
    auto r = get_choice("MPC_CFGTEST_INT");  // not a choice knob
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
}

// ---- the scheduler's and core's knobs ---------------------------------------------------------

TEST(Config, EngineKnobsAreDeclared) {
    for (const char* k : {"MPC_VPS", "MPC_BIND", "MPC_STACK_SIZE", "MPC_SCHED_SPIN_US", "MPC_SCHED_STEAL",
                          "MPC_SCHED_DEADLOCK_TIMEOUT", "MPC_SCHED_BIND", "MPC_SCHED_STACK_CACHE", "MPC_LOG_LEVEL"}) {
        env_guard g(k, nullptr);
        EXPECT_NE(raw(k), nullptr) << k << " is not declared in any knob table";
    }
}

TEST(Config, EngineKnobDefaultsParse) {
    // Every engine knob's default must be valid for its type (MPC_VPS may default to "0" = auto).
    for (const char* k : {"MPC_SCHED_SPIN_US", "MPC_SCHED_DEADLOCK_TIMEOUT", "MPC_SCHED_STACK_CACHE"}) {
        env_guard g(k, nullptr);
        auto r = get_int(k);
        ASSERT_TRUE(r.ok()) << k << " default '" << (raw(k) ? raw(k) : "(null)") << "'";
        EXPECT_GE(*r, 0) << k;
    }
    for (const char* k : {"MPC_SCHED_STEAL", "MPC_SCHED_BIND"}) {
        env_guard g(k, nullptr);
        EXPECT_TRUE(get_bool(k).ok()) << k << " default '" << (raw(k) ? raw(k) : "(null)") << "'";
    }
    {
        env_guard g("MPC_BIND", nullptr);
        auto r = get_choice("MPC_BIND");
        ASSERT_TRUE(r.ok());
        EXPECT_TRUE(*r == 0 || *r == 1);
    }
    {
        env_guard g("MPC_STACK_SIZE", nullptr);
        auto r = get_size("MPC_STACK_SIZE");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 1 * MiB);  // documented default: 1 MiB
    }
}

TEST(Config, StackSizeFromEnvironment) {
    struct {
        const char* text;
        std::size_t value;
    } good[] = {{"64k", 64 * KiB}, {"8M", 8 * MiB}, {"1g", GiB}, {"131072", 131072}, {"12b", 12}};
    for (const auto& c : good) {
        env_guard g("MPC_STACK_SIZE", c.text);
        auto r = get_size("MPC_STACK_SIZE");
        ASSERT_TRUE(r.ok()) << c.text;
        EXPECT_EQ(*r, c.value) << c.text;
    }
    for (const char* bad : {"-1", "abc", "99999999999999999999g", "64q"}) {
        env_guard g("MPC_STACK_SIZE", bad);
        auto r = get_size("MPC_STACK_SIZE");
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().code(), errc::invalid_argument) << bad;
    }
}

TEST(Config, BindChoice) {
    {
        env_guard g("MPC_BIND", "compact");
        auto r = get_choice("MPC_BIND");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 0);
    }
    {
        env_guard g("MPC_BIND", "scatter");
        auto r = get_choice("MPC_BIND");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 1);
    }
    for (const char* bad : {"bogus", "Compact", "scat", "compact,scatter"}) {
        env_guard g("MPC_BIND", bad);
        auto r = get_choice("MPC_BIND");
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_EQ(r.error().code(), errc::invalid_argument) << bad;
    }
}

TEST(Config, VpsAndOtherIntegers) {
    {
        env_guard g("MPC_VPS", "4");
        auto r = get_int("MPC_VPS");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 4);
    }
    {
        env_guard g("MPC_VPS", "four");
        auto r = get_int("MPC_VPS");
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code(), errc::invalid_argument);
    }
    {
        env_guard g("MPC_SCHED_DEADLOCK_TIMEOUT", "0");
        auto r = get_int("MPC_SCHED_DEADLOCK_TIMEOUT");
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(*r, 0);
    }
    {
        env_guard g("MPC_SCHED_SPIN_US", "50us");
        EXPECT_FALSE(get_int("MPC_SCHED_SPIN_US").ok());
    }
    {
        env_guard g("MPC_SCHED_STEAL", "off");
        auto r = get_bool("MPC_SCHED_STEAL");
        ASSERT_TRUE(r.ok());
        EXPECT_FALSE(*r);
    }
    {
        env_guard g("MPC_SCHED_STEAL", "sometimes");
        EXPECT_FALSE(get_bool("MPC_SCHED_STEAL").ok());
    }
}

// ---- unknown variables and --info -------------------------------------------------------------

TEST(Config, WarnUnknownEnvironmentCountsUnknownVariables) {
    env_guard clear1("MPC_FOO", nullptr);
    env_guard clear2("MPC_CFGTEST_TYPO", nullptr);
    const int base = warn_unknown_environment();
    EXPECT_GE(base, 0);
    {
        env_guard g("MPC_FOO", "1");
        EXPECT_EQ(warn_unknown_environment(), base + 1);
        {
            env_guard g2("MPC_CFGTEST_TYPO", "x");
            EXPECT_EQ(warn_unknown_environment(), base + 2);
        }
        // Declared knobs and variables outside the MPC_ namespace are not counted.
        env_guard known("MPC_VPS", "2");
        env_guard other("MPCFOO", "1");
        env_guard other2("XMPC_FOO", "1");
        EXPECT_EQ(warn_unknown_environment(), base + 1);
    }
    EXPECT_EQ(warn_unknown_environment(), base);
}

TEST(Config, PrintInfoListsKnobs) {
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    print_info(f);
    std::fflush(f);
    std::rewind(f);
    std::string text;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        text.append(buf, n);
    }
    std::fclose(f);
    for (const char* k : {"MPC_VPS", "MPC_BIND", "MPC_STACK_SIZE", "MPC_LOG_LEVEL", "MPC_CFGTEST_CHOICE",
                          "alpha|beta|gamma", "compact|scatter", "[cfgtest]"}) {
        EXPECT_NE(text.find(k), std::string::npos) << k << " missing from:\n" << text;
    }
}

// ---- log levels -------------------------------------------------------------------------------

class LogConfigure : public ::testing::Test {
protected:
    void TearDown() override { EXPECT_TRUE(log_configure("warn")); }
};

TEST_F(LogConfigure, DefaultAndPerSubsystem) {
    ASSERT_TRUE(log_configure("warn,sched:debug"));
    EXPECT_TRUE(log_enabled(log_level::debug, subsys::sched));
    EXPECT_FALSE(log_enabled(log_level::trace, subsys::sched));
    EXPECT_TRUE(log_enabled(log_level::warn, subsys::net));
    EXPECT_TRUE(log_enabled(log_level::error, subsys::net));
    EXPECT_FALSE(log_enabled(log_level::info, subsys::net));
    EXPECT_FALSE(log_enabled(log_level::debug, subsys::core));

    ASSERT_TRUE(log_configure("error"));
    EXPECT_FALSE(log_enabled(log_level::warn, subsys::sched)) << "a bare level applies to every subsystem";
    EXPECT_TRUE(log_enabled(log_level::error, subsys::sched));
    EXPECT_TRUE(log_enabled(log_level::fatal, subsys::tg));

    ASSERT_TRUE(log_configure("net:trace,mpi:info"));
    EXPECT_TRUE(log_enabled(log_level::trace, subsys::net));
    EXPECT_TRUE(log_enabled(log_level::info, subsys::mpi));
    EXPECT_FALSE(log_enabled(log_level::debug, subsys::mpi));
    EXPECT_FALSE(log_enabled(log_level::warn, subsys::core)) << "unnamed subsystems keep their level";

    ASSERT_TRUE(log_configure("trace"));
    for (int s = 0; s < static_cast<int>(subsys::count_); ++s) {
        EXPECT_TRUE(log_enabled(log_level::trace, static_cast<subsys>(s)));
    }
    ASSERT_TRUE(log_configure("fatal"));
    EXPECT_FALSE(log_enabled(log_level::error, subsys::core));
    EXPECT_TRUE(log_enabled(log_level::fatal, subsys::core));
}

TEST_F(LogConfigure, BadSpecsAreRejectedAndChangeNothing) {
    ASSERT_TRUE(log_configure("error"));
    for (const char* bad : {"loud", "WARN", "sched:loud", "nosuch:debug", "sched:", ":debug", "debug,bogus:trace",
                            "debug,sched:verbose", "warn;sched:debug", "sched=debug"}) {
        EXPECT_FALSE(log_configure(bad)) << bad;
        EXPECT_FALSE(log_enabled(log_level::warn, subsys::core)) << "'" << bad << "' changed the level";
        EXPECT_FALSE(log_enabled(log_level::warn, subsys::sched)) << "'" << bad << "' changed the level";
        EXPECT_TRUE(log_enabled(log_level::error, subsys::sched));
    }
}

TEST(Log, SubsystemNames) {
    EXPECT_STREQ(to_string(subsys::core), "core");
    EXPECT_STREQ(to_string(subsys::sched), "sched");
    EXPECT_STREQ(to_string(subsys::net), "net");
    EXPECT_STREQ(to_string(subsys::tg), "tg");
}

TEST(Status, CodesAndResults) {
    status ok;
    EXPECT_TRUE(ok.ok());
    EXPECT_STREQ(ok.reason(), to_string(errc::ok));
    status bad(errc::busy, "joined twice");
    EXPECT_FALSE(bad.ok());
    EXPECT_EQ(bad.code(), errc::busy);
    EXPECT_STREQ(bad.reason(), "joined twice");
    status plain(errc::deadlock);
    EXPECT_STREQ(plain.reason(), "deadlock");
    status sys = status::from_errno("open", ENOENT);
    EXPECT_EQ(sys.code(), errc::system);
    EXPECT_EQ(sys.sys_errno(), ENOENT);
    for (int e = 0; e <= static_cast<int>(errc::internal); ++e) {
        const char* t = to_string(static_cast<errc>(e));
        ASSERT_NE(t, nullptr);
        EXPECT_GT(std::strlen(t), 0u);
    }
    result<std::string> r = std::string("value");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, "value");
    result<std::string> moved = std::move(r);
    EXPECT_EQ(*moved, "value");
    result<int> e = status(errc::no_memory);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code(), errc::no_memory);
}

}  // namespace
