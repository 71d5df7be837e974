// test_header_cxx.cpp - the public headers compile (and the core links) from C++.
#include <taskscope/model.h>
#include <taskscope/policy.h>
#include <taskscope/rt.h>
#include <taskscope/taskscope.h>
#include <taskscope/tool.h>

#include <cstdio>
#include <cstring>

int main()
{
    if (std::strcmp(tscope_strerror(TSCOPE_EINVAL), "invalid argument") != 0 ||
        tscope_version() != TSCOPE_VERSION_HEX) {
        std::fprintf(stderr, "C++ view of the API disagrees\n");
        return 1;
    }
    tscope_tune_dim_t dim = {1, 4, 1};
    tscope_tuner_t *tuner = nullptr;
    if (tscope_tuner_create(TSCOPE_TUNER_EXHAUSTIVE, &dim, 1, nullptr, &tuner) != 0)
        return 1;
    tscope_tuner_destroy(tuner);
    tscope_type_t t = 0;
    return tscope_type_register("cxx", &t) == 0 && t != 0 ? 0 : 1;
}
