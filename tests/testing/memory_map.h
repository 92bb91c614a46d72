// What the kernel says about this process's memory (/proc/self/smaps), for
// tests that memory the kernels stream is advised for huge pages.
// Threading: any thread.
#pragma once

#include <optional>
#include <string>

namespace met::testing {

// The VmFlags line of the mapping that holds `p` ("rd wr mr mw me ac hg"),
// nullopt when /proc/self/smaps cannot be read or no mapping holds `p`.
std::optional<std::string> vm_flags_of(const void* p);

// Whether the mapping holding `p` carries MADV_HUGEPAGE (the "hg" flag);
// nullopt when vm_flags_of() has nothing to say.
std::optional<bool> advised_for_huge_pages(const void* p);

}  // namespace met::testing
