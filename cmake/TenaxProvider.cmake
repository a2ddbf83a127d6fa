# Selects the CPU provider: sources to compile and the tenax_provider interface target.
include(TenaxProviderDeps)
tenax_find_provider_deps(${TENAX_PROVIDER})
add_library(tenax_provider INTERFACE)
if(TENAX_PROVIDER STREQUAL "eigen")
  # One file per routine family, so the heavy Eigen solvers compile in parallel.
  set(TENAX_PROVIDER_SOURCES src/cpu/provider_eigen.cpp src/cpu/provider_eigen_lu.cpp src/cpu/provider_eigen_cholesky.cpp
      src/cpu/provider_eigen_qr.cpp src/cpu/provider_eigen_syevd.cpp src/cpu/provider_eigen_gesdd_real.cpp
      src/cpu/provider_eigen_gesdd_complex.cpp)
  target_link_libraries(tenax_provider INTERFACE $<BUILD_INTERFACE:tenax_dep::eigen>)
  target_compile_definitions(tenax_provider INTERFACE $<BUILD_INTERFACE:TENAX_PROVIDER_EIGEN>)
else()
  set(TENAX_PROVIDER_SOURCES src/cpu/provider_cblas.cpp)
  target_link_libraries(tenax_provider INTERFACE $<BUILD_INTERFACE:tenax_dep::blas>)
  string(TOUPPER ${TENAX_PROVIDER} _up)
  target_compile_definitions(tenax_provider INTERFACE $<BUILD_INTERFACE:TENAX_PROVIDER_${_up}>)
endif()
# The installed package re-creates these dependencies from TenaxProviderDeps.cmake.
set_target_properties(tenax_provider PROPERTIES EXPORT_NAME provider)
if(TENAX_PROVIDER STREQUAL "eigen")
  target_link_libraries(tenax_provider INTERFACE $<INSTALL_INTERFACE:tenax_dep::eigen>)
else()
  target_link_libraries(tenax_provider INTERFACE $<INSTALL_INTERFACE:tenax_dep::blas>)
endif()
message(STATUS "tenax: CPU provider ${TENAX_PROVIDER}")
