# Warnings.cmake - the project's warning set, -Werror on request, and the
# sanitizer flags for the whole build (TSCOPE_SANITIZE).
set(TSCOPE_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
    -Wno-format-nonliteral)
if(TSCOPE_WERROR)
  list(APPEND TSCOPE_WARNINGS -Werror)
endif()

if(TSCOPE_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(TSCOPE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT TSCOPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "TSCOPE_SANITIZE must be '', 'address' or 'thread'")
endif()

add_compile_definitions(_GNU_SOURCE)

function(tscope_warnings target)
  target_compile_options(${target} PRIVATE ${TSCOPE_WARNINGS})
endfunction()
