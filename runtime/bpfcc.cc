// The clang wrapper (see bpfcc.h): drives clang's frontend in-process with
// the same cc1 options the clang driver would pass for
// `clang -target bpf -O2 -g -c`, reading the source from memory and writing
// the object into memory.
#include "runtime/bpfcc.h"

// LLVM's headers are not clean under -Wextra.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/Basic/Version.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#pragma GCC diagnostic pop

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

void init_backends()
{
	static std::once_flag once;
	std::call_once(once, [] {
		LLVMInitializeBPFTargetInfo();
		LLVMInitializeBPFTarget();
		LLVMInitializeBPFTargetMC();
		LLVMInitializeBPFAsmPrinter();
		llvm::InitializeNativeTarget();
		llvm::InitializeNativeTargetAsmPrinter();
	});
}

bool is_dir(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Clang's resource directory (stddef.h, stdint.h ...) sits next to the
// clang library we were linked against: <libdir>/clang/<version>.  Found at
// run time so the wrapper works wherever the distribution put LLVM.
std::string find_resource_dir()
{
	Dl_info info;
	if (!dladdr(reinterpret_cast<void *>(&clang::getClangFullVersion), &info) || !info.dli_fname)
		return "";
	std::vector<std::string> candidates;
	std::string loaded = info.dli_fname;
	candidates.push_back(loaded);
	char resolved[PATH_MAX];
	if (realpath(loaded.c_str(), resolved))
		candidates.push_back(resolved);
	for (const std::string &lib : candidates) {
		std::string dir = lib.substr(0, lib.rfind('/'));
		std::string resource = dir + "/clang/" CLANG_VERSION_STRING;
		if (is_dir(resource + "/include"))
			return resource;
	}
	return "";
}

const std::string &resource_dir()
{
	static std::once_flag once;
	static std::string dir;
	std::call_once(once, [] { dir = find_resource_dir(); });
	return dir;
}

// cc1 options shared by objects and precompiled headers: a PCH is only
// accepted by a compilation with the same language and target options.
std::vector<std::string> common_args(const char *const *include_dirs)
{
	std::vector<std::string> args = {
		"-triple", "bpfel",
		"-O2",
		"-debug-info-kind=constructor", "-dwarf-version=5",  // BTF comes from debug info
		"-mrelocation-model", "static",
		"-fgnuc-version=4.2.1",
		"-ferror-limit", "20",
		"-Wno-unused-function",  // ut.h helpers a script does not use
	};
	const std::string &rd = resource_dir();
	if (!rd.empty()) {
		args.insert(args.end(), {"-resource-dir", rd, "-internal-isystem", rd + "/include"});
	}
	args.insert(args.end(), {"-internal-externc-isystem", "/usr/include"});
	// The C library's per-architecture headers (asm/errno.h, which
	// libbpf's usdt.bpf.h reaches through linux/errno.h), where Debian
	// keeps them: the system clang's driver adds this for the host.
	struct utsname u;
	if (uname(&u) == 0) {
		std::string multiarch = std::string("/usr/include/") + u.machine + "-linux-gnu";
		if (is_dir(multiarch))
			args.insert(args.end(), {"-internal-externc-isystem", multiarch});
	}
	for (const char *const *d = include_dirs; d && *d; d++)
		args.insert(args.end(), {"-I", *d});
	return args;
}

// cc1 options for the reader's code: this machine's triple and its
// baseline CPU (a .uto may run on another), position-independent (the
// object is placed anywhere), no debug info, nothing but the generated
// file (it includes no header).
std::vector<std::string> host_args()
{
	return {
		"-triple", llvm::sys::getProcessTriple(),
		"-O2",
		"-mrelocation-model", "pic", "-pic-level", "2",
		"-fgnuc-version=4.2.1",
		"-ferror-limit", "20",
		"-w",  // generated code: constant casts and folds that warnings would flag
		// an expression the compiler takes (at most 240 brackets in BPF
		// C) nests more here: each operation is a statement expression
		"-fbracket-depth", "1024",
		"-nostdsysteminc", "-nobuiltininc",
	};
}

char *copy_text(const std::string &s)
{
	if (s.empty())
		return nullptr;
	return strdup(s.c_str());
}

// Runs one frontend action with the given cc1 arguments; diagnostics go to
// `diag_text`.  `setup` adjusts the instance before the action runs.
template <typename Setup>
bool run_action(const std::vector<std::string> &args, clang::FrontendAction &action,
		std::string &diag_text, Setup setup)
{
	init_backends();
	llvm::raw_string_ostream diag_stream(diag_text);
	llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diag_opts(new clang::DiagnosticOptions());
	clang::TextDiagnosticPrinter printer(diag_stream, diag_opts.get());

	std::vector<const char *> argv;
	for (const std::string &a : args)
		argv.push_back(a.c_str());
	auto invocation = std::make_shared<clang::CompilerInvocation>();
	{
		clang::DiagnosticsEngine arg_diags(
			llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs>(new clang::DiagnosticIDs()),
			diag_opts.get(), &printer, false);
		if (!clang::CompilerInvocation::CreateFromArgs(*invocation, argv, arg_diags)) {
			diag_stream.flush();
			return false;
		}
	}
	if (resource_dir().empty())
		diag_stream << "warning: clang resource directory not found next to libclang-cpp\n";

	clang::CompilerInstance ci;
	ci.setInvocation(invocation);
	ci.createDiagnostics(&printer, false);
	setup(ci);
	bool ok = ci.ExecuteAction(action) && !ci.getDiagnostics().hasErrorOccurred();
	diag_stream.flush();
	return ok;
}

}  // namespace

extern "C" int ut_bpfcc_compile(const struct ut_bpfcc_opts *o, void **obj, size_t *obj_len,
				char **diagnostics)
{
	*obj = nullptr;
	*obj_len = 0;
	*diagnostics = nullptr;
	std::string name = o->source_name ? o->source_name : "program.bpf.c";
	std::vector<std::string> args = o->host ? host_args() : common_args(o->include_dirs);
	if (o->pch)
		args.insert(args.end(), {"-include-pch", o->pch});
	args.insert(args.end(), {"-emit-obj", "-main-file-name", name, "-x", "c", name});

	llvm::SmallVector<char, 0> object;
	clang::EmitObjAction action;
	std::string diag_text;
	bool ok = run_action(args, action, diag_text, [&](clang::CompilerInstance &ci) {
		ci.getPreprocessorOpts().addRemappedFile(
			name, llvm::MemoryBuffer::getMemBufferCopy(
				      llvm::StringRef(o->source, o->source_len), name)
				      .release());
		ci.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
	});
	*diagnostics = copy_text(diag_text);
	if (!ok || object.empty())
		return -1;
	*obj = malloc(object.size());
	if (!*obj)
		return -1;
	memcpy(*obj, object.data(), object.size());
	*obj_len = object.size();
	return 0;
}

extern "C" int ut_bpfcc_make_pch(const char *header, const char *const *include_dirs,
				 const char *pch_path, char **diagnostics)
{
	*diagnostics = nullptr;
	std::vector<std::string> args = common_args(include_dirs);
	args.insert(args.end(), {"-emit-pch", "-o", pch_path, "-x", "c-header", header});
	clang::GeneratePCHAction action;
	std::string diag_text;
	bool ok = run_action(args, action, diag_text, [](clang::CompilerInstance &) {});
	*diagnostics = copy_text(diag_text);
	return ok ? 0 : -1;
}

extern "C" const char *ut_bpfcc_version(void)
{
	static const std::string version = clang::getClangFullVersion();
	return version.c_str();
}
