# Selects the CPU provider: its sources, compiled on their own (the object library
# tenax_provider_objects, which tenax takes in), and the tenax_provider interface target that
# carries the provider's link requirements.
#
# Only the provider's own files see its headers (cblas.h/lapacke.h or Eigen) and its macro
# (TENAX_PROVIDER_<NAME>): the rest of tenax, and every program that links it, compiles the same
# whichever provider is chosen (scripts/test.sh relies on this to reuse compiled test objects,
# through ccache, when it rebuilds with a second provider).
include(TenaxProviderDeps)
tenax_find_provider_deps(${TENAX_PROVIDER})
add_library(tenax_provider INTERFACE)
string(TOUPPER ${TENAX_PROVIDER} _tenax_provider_up)
if(TENAX_PROVIDER STREQUAL "eigen")
  # One file per routine family (gesdd: one per dtype), so the heavy Eigen solvers compile in parallel.
  set(_tenax_provider_sources src/cpu/provider_eigen.cpp src/cpu/provider_eigen_lu.cpp
      src/cpu/provider_eigen_cholesky.cpp src/cpu/provider_eigen_qr.cpp src/cpu/provider_eigen_syevd.cpp
      src/cpu/provider_eigen_geev.cpp
      src/cpu/eigen_syevd.cpp
      src/cpu/provider_eigen_gesdd_f32.cpp src/cpu/provider_eigen_gesdd_f64.cpp
      src/cpu/provider_eigen_gesdd_c64.cpp src/cpu/provider_eigen_gesdd_c128.cpp)
  set(_tenax_provider_dep tenax_dep::eigen)
else()
  # The CBLAS provider also takes Eigen's eigensolver and SVD for small matrices (eigen_syevd.cpp,
  # eigen_small_gesdd.cpp);
  # Eigen is header-only, so it stays a build-time dependency of tenax itself.
  set(_tenax_provider_sources src/cpu/provider_cblas.cpp src/cpu/eigen_syevd.cpp
      src/cpu/eigen_small_gesdd.cpp)
  set(_tenax_provider_dep tenax_dep::blas)
  tenax_find_provider_deps(eigen)
  set(_tenax_provider_private_dep tenax_dep::eigen)
endif()
target_link_libraries(tenax_provider INTERFACE $<BUILD_INTERFACE:${_tenax_provider_dep}>
                                               $<INSTALL_INTERFACE:${_tenax_provider_dep}>)

add_library(tenax_provider_objects OBJECT ${_tenax_provider_sources})
target_compile_features(tenax_provider_objects PRIVATE cxx_std_20)
target_include_directories(tenax_provider_objects PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(tenax_provider_objects PRIVATE TENAX_PROVIDER_${_tenax_provider_up})
target_link_libraries(tenax_provider_objects PRIVATE ${_tenax_provider_dep} ${_tenax_provider_private_dep})
set_target_properties(tenax_provider_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
if(NOT MSVC)
  target_compile_options(tenax_provider_objects PRIVATE -Wall -Wextra)
endif()

# The installed package re-creates these dependencies from TenaxProviderDeps.cmake.
set_target_properties(tenax_provider PROPERTIES EXPORT_NAME provider)
message(STATUS "tenax: CPU provider ${TENAX_PROVIDER}")
