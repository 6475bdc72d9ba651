// Boost.Process v1, wherever this Boost keeps it, as fc::bp. Up to Boost 1.87 v1 is
// boost/process/*.hpp; from 1.88, where v2 became the default, it lives in boost/process/v1/
// (namespace boost::process::v1), and the old paths are v2's. forkcheck uses v1: its
// on_exec_setup hook runs our code in the child between fork and exec. Debian bookworm has 1.74;
// Homebrew and vcpkg are past 1.88.
#pragma once

#include <boost/version.hpp>

#if BOOST_VERSION >= 108800
#include <boost/process/v1/args.hpp>
#include <boost/process/v1/child.hpp>
#include <boost/process/v1/env.hpp>
#include <boost/process/v1/environment.hpp>
#include <boost/process/v1/error.hpp>
#include <boost/process/v1/exe.hpp>
#include <boost/process/v1/extend.hpp>
#include <boost/process/v1/io.hpp>
#include <boost/process/v1/search_path.hpp>
namespace fc {
namespace bp = ::boost::process::v1;
}
#else
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>
namespace fc {
namespace bp = ::boost::process;
}
#endif
