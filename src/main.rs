fn main() {
    std::process::exit(fable::cli::main())
}
