#pragma once
// trace -> transform -> compile -> prepared run (see tenax/trace/traced.hpp).
#include "tenax/trace/graph.hpp"
#include "tenax/trace/program.hpp"
#include "tenax/trace/traced.hpp"
