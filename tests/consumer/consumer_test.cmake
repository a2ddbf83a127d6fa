# Driver of the `consumer` test (cmake -P). See CMakeLists.txt next to it for the two scenarios.
# Inputs (-D): TENAX_SOURCE_DIR TENAX_BINARY_DIR WORK_DIR SUBDIR_PROJECT GENERATOR CXX_COMPILER
#              BUILD_TYPE PROVIDER SHARED CXX_FLAGS LINK_FLAGS CXX_LAUNCHER; CUDA_COMPILER,
#              CUDA_LAUNCHER and CUDA_ARCHITECTURES (',' between them) when the build has CUDA
cmake_minimum_required(VERSION 3.25)

foreach(v TENAX_SOURCE_DIR TENAX_BINARY_DIR WORK_DIR SUBDIR_PROJECT GENERATOR BUILD_TYPE PROVIDER)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "consumer: -D${v}=... is required")
  endif()
endforeach()

# Runs a command; on failure prints its output and stops the test.
function(run step)
  string(TIMESTAMP t0 "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(TIMESTAMP t1 "%s")
  math(EXPR dt "${t1} - ${t0}")
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "consumer: ${step} failed (exit ${rc}):\n  ${cmd}\n${out}")
  endif()
  message(STATUS "consumer: ${step} ok (${dt} s)")
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# Configure arguments shared by the outside projects: same compiler, generator and build type.
set(common -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
if(CXX_COMPILER)
  list(APPEND common -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(CXX_FLAGS)
  list(APPEND common "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
endif()
if(LINK_FLAGS)
  list(APPEND common "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
endif()
if(CXX_LAUNCHER)
  list(APPEND common -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
set(build_args --parallel 2)
set(config_arg)
if(GENERATOR MATCHES "Visual Studio|Xcode|Multi-Config")
  set(config_arg --config ${BUILD_TYPE})
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/elsewhere")

# The add_subdirectory project's CUDA settings, in an initial cache (the architectures are a list).
set(sub_cuda -DTENAX_WITH_CUDA=OFF)
if(CUDA_COMPILER)
  string(REPLACE "," ";" archs "${CUDA_ARCHITECTURES}")
  set(cache "set(TENAX_WITH_CUDA ON CACHE STRING \"\")\n")
  string(APPEND cache "set(CMAKE_CUDA_COMPILER \"${CUDA_COMPILER}\" CACHE FILEPATH \"\")\n")
  string(APPEND cache "set(CMAKE_CUDA_ARCHITECTURES \"${archs}\" CACHE STRING \"\")\n")
  if(CUDA_LAUNCHER)
    string(APPEND cache "set(CMAKE_CUDA_COMPILER_LAUNCHER \"${CUDA_LAUNCHER}\" CACHE STRING \"\")\n")
  endif()
  file(WRITE "${WORK_DIR}/cuda_cache.cmake" "${cache}")
  set(sub_cuda -C "${WORK_DIR}/cuda_cache.cmake")
endif()

# ---- (a) install, relocate, find_package ------------------------------------------------------
set(stage "${WORK_DIR}/stage")
set(prefix "${WORK_DIR}/elsewhere/tenax")
run("install" ${CMAKE_COMMAND} --install "${TENAX_BINARY_DIR}" --prefix "${stage}" --config ${BUILD_TYPE})
file(RENAME "${stage}" "${prefix}")

# The installed package must not point back at the source tree, the build tree or the prefix it
# was installed to (it has just been moved away from it).
file(GLOB_RECURSE cmake_files "${prefix}/*.cmake")
if(NOT cmake_files)
  message(FATAL_ERROR "consumer: no CMake package files under the installed prefix ${prefix}")
endif()
set(found_targets FALSE)
foreach(f IN LISTS cmake_files)
  if(f MATCHES "tenaxTargets")
    set(found_targets TRUE)
  endif()
  file(READ "${f}" text)
  foreach(bad "${TENAX_SOURCE_DIR}" "${TENAX_BINARY_DIR}" "${stage}")
    string(FIND "${text}" "${bad}" pos)
    if(pos GREATER -1)
      message(FATAL_ERROR "consumer: installed ${f} is not relocatable: it contains the absolute path ${bad}")
    endif()
  endforeach()
endforeach()
if(NOT found_targets)
  message(FATAL_ERROR "consumer: tenaxTargets*.cmake was not installed under ${prefix}")
endif()
foreach(h tenax/tenax.hpp tenax/core/tensor.hpp)
  if(NOT EXISTS "${prefix}/include/${h}")
    message(FATAL_ERROR "consumer: ${h} was not installed under ${prefix}/include")
  endif()
endforeach()
message(STATUS "consumer: installed package is relocatable (moved to ${prefix})")

set(ex "${WORK_DIR}/examples")
run("configure examples against the installed package" ${CMAKE_COMMAND} -S "${TENAX_SOURCE_DIR}/examples" -B "${ex}"
    ${common} "-DCMAKE_PREFIX_PATH=${prefix}")
# Make sure it was this prefix that was found, not some other tenax on the system.
file(STRINGS "${ex}/CMakeCache.txt" tenax_dir REGEX "^tenax_DIR:")
string(FIND "${tenax_dir}" "${prefix}/" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "consumer: examples found tenax at '${tenax_dir}', expected under ${prefix}")
endif()
run("build examples" ${CMAKE_COMMAND} --build "${ex}" ${build_args} ${config_arg})
foreach(exe gradient_basics least_squares_gd)
  set(path "${ex}/${exe}")
  if(NOT EXISTS "${path}" AND EXISTS "${ex}/${BUILD_TYPE}/${exe}")
    set(path "${ex}/${BUILD_TYPE}/${exe}")
  endif()
  run("run ${exe}" "${path}")
endforeach()

# ---- (b) add_subdirectory ---------------------------------------------------------------------
set(sub_args ${common} ${sub_cuda} "-DTENAX_SOURCE_DIR=${TENAX_SOURCE_DIR}" "-DTENAX_PROVIDER=${PROVIDER}")
# Configures, builds and runs the add_subdirectory project in WORK_DIR/<dir> (extra configure
# arguments after the label's suffix).
function(subdir_scenario dir suffix)
  set(sub "${WORK_DIR}/${dir}")
  run("configure add_subdirectory consumer${suffix}" ${CMAKE_COMMAND} -S "${SUBDIR_PROJECT}" -B "${sub}" ${sub_args}
      ${ARGN})
  run("build add_subdirectory consumer${suffix}" ${CMAKE_COMMAND} --build "${sub}" ${build_args} ${config_arg})
  set(path "${sub}/subdir_consumer")
  if(NOT EXISTS "${path}" AND EXISTS "${sub}/${BUILD_TYPE}/subdir_consumer")
    set(path "${sub}/${BUILD_TYPE}/subdir_consumer")
  endif()
  run("run add_subdirectory consumer${suffix}" "${path}")
endfunction()
if(SHARED)
  subdir_scenario(subdir "" -DBUILD_SHARED_LIBS=ON)
else()
  subdir_scenario(subdir "")
  # ---- (c) add_subdirectory, shared -------------------------------------------------------------
  # The same project with a shared tenax (the objects are this build's, from ccache): the program
  # is compiled with hidden visibility and checks that its NoGradGuard reaches the library's ops.
  subdir_scenario(subdir-shared " (shared)" -DBUILD_SHARED_LIBS=ON)
endif()

# Keep the work tree small: the build trees are only needed when something failed.
file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "consumer: all scenarios passed")
