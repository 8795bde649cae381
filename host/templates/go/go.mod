module wit_component

go 1.27.1

require go.bytecodealliance.org/pkg v0.4.0

// The runtime package the generated bindings import, shipped with toolhost (the Go module
// proxy does not have to be reachable). The build uses its own copy of this file, pointed
// at the checkout that builds it; this line serves your editor and `go vet`.
replace go.bytecodealliance.org/pkg => {{toolhost_src}}/xtask/go-pkg
