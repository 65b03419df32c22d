# The a2a-tap image: the release binary on a distroless base (glibc, no
# shell, no package manager), running as a non-root user.
#
#   docker build --build-arg A2A_TAP_COMMIT=$(git rev-parse --short=12 HEAD) -t a2a-tap:0.1.0 .
#   docker run --rm -p 8080:8080 -p 9464:9464 a2a-tap:0.1.0 \
#     --listen 0.0.0.0:8080 --admin 0.0.0.0:9464 --upstream http://agent:9999
#
# Why glibc and not a static musl binary: musl's allocator is markedly slower
# under the proxy's many small concurrent allocations, and the proxy must not
# slow traffic. The binary links only libc, libm and libgcc_s, which the
# `cc` distroless base carries (scripts/image-check.sh checks that list).

FROM docker.io/library/rust:1.88-bookworm AS build
WORKDIR /src
# Dependencies first, so a source change does not rebuild them.
COPY Cargo.toml Cargo.lock build.rs ./
COPY benches benches
COPY examples examples
RUN mkdir src && echo 'fn main() {}' > src/main.rs && echo '' > src/lib.rs \
    && cargo build --release --locked --bin a2a-tap \
    && rm -rf src
COPY src src
ARG A2A_TAP_COMMIT=unknown
ENV A2A_TAP_COMMIT=${A2A_TAP_COMMIT}
RUN touch src/main.rs src/lib.rs && cargo build --release --locked --bin a2a-tap \
    && strip target/release/a2a-tap

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/a2a-tap /usr/local/bin/a2a-tap
# distroless's `nonroot` user; the Kubernetes example runs as the same ids.
USER 65532:65532
EXPOSE 8080 9464
ENTRYPOINT ["/usr/local/bin/a2a-tap"]
CMD ["--help"]
