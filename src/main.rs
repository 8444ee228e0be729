fn main() -> std::process::ExitCode {
    memscope::cli::main()
}
