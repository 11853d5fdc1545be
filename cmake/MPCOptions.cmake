# One function sets warnings, -Werror and sanitizers for every target of our own code.
if(MPC_SANITIZE STREQUAL "address")
  set(MPC_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(MPC_SANITIZE STREQUAL "thread")
  set(MPC_SANITIZER_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
elseif(MPC_SANITIZE STREQUAL "undefined")
  set(MPC_SANITIZER_FLAGS -fsanitize=undefined -fno-sanitize-recover=undefined)
elseif(NOT MPC_SANITIZE STREQUAL "")
  message(FATAL_ERROR "MPC_SANITIZE must be address, thread, undefined or empty (got '${MPC_SANITIZE}')")
else()
  set(MPC_SANITIZER_FLAGS "")
endif()
if(MPC_SANITIZER_FLAGS)
  # Sanitizers must see every object, including third-party test code.
  add_compile_options(${MPC_SANITIZER_FLAGS})
  add_link_options(${MPC_SANITIZER_FLAGS})
endif()

function(mpc_target_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wno-missing-field-initializers>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:Clang>>:-Wthread-safety>
    # Calls inside libmpc bind directly (no PLT); nobody interposes the runtime's own functions.
    $<$<COMPILE_LANGUAGE:CXX,C>:-fno-semantic-interposition>)
  if(MPC_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX,C>:-Werror>)
  endif()
endfunction()
