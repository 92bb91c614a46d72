// What the kernel says about this process's memory (/proc/self/smaps,
// mincore), for tests that memory the kernels stream is advised for huge
// pages and that what a step reads from a model's file is in memory.
// Threading: any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace met::testing {

// The VmFlags line of the mapping that holds `p` ("rd wr mr mw me ac hg"),
// nullopt when /proc/self/smaps cannot be read or no mapping holds `p`.
std::optional<std::string> vm_flags_of(const void* p);

// Whether the mapping holding `p` carries MADV_HUGEPAGE (the "hg" flag);
// nullopt when vm_flags_of() has nothing to say.
std::optional<bool> advised_for_huge_pages(const void* p);

// The share (0 to 1) of the pages of [p, p + bytes) in memory (mincore);
// nullopt when the kernel will not say.
std::optional<double> resident_share(const void* p, size_t bytes);

// Writes the file at `path` back and asks the kernel to drop its cached pages
// (POSIX_FADV_DONTNEED), then returns the share of them still in memory
// (nullopt: the file could not be opened or mapped). A file system that
// keeps files in memory (tmpfs) answers 1.
std::optional<double> drop_cached_pages(const std::string& path);

}  // namespace met::testing
