// test_header_cxx.cpp - the public header compiles and links from C++.
#include <taskscope/taskscope.h>

#include <cstdio>
#include <cstring>

int main()
{
    if (std::strcmp(tscope_strerror(TSCOPE_EINVAL), "invalid argument") != 0 ||
        tscope_version() != TSCOPE_VERSION_HEX) {
        std::fprintf(stderr, "C++ view of the API disagrees\n");
        return 1;
    }
    tscope_type_t t = 0;
    return tscope_type_register("cxx", &t) == 0 && t != 0 ? 0 : 1;
}
