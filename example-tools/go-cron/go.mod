module wit_component

go 1.27.1

require go.bytecodealliance.org/pkg v0.4.0

// The runtime package the generated bindings import (xtask/go-pkg/README.md). The build
// points a copy of this module at it by absolute path; this line serves an editor.
replace go.bytecodealliance.org/pkg => ../../xtask/go-pkg
