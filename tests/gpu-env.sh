# Sourced on the GPU machine: the runtime libraries its image lacks travel as
# Debian packages in .gl/ (see tests/gpu-pack.sh); they are unpacked into a
# private root, not over /, so the image's newer libc and libstdc++ stay.
#   . tests/gpu-env.sh
_root=/tmp/debroot
if [ ! -d "$_root/usr/lib/x86_64-linux-gnu" ]; then
  mkdir -p "$_root"
  for f in .gl/*.deb; do dpkg -x "$f" "$_root"; done
fi
export LD_LIBRARY_PATH=$_root/usr/lib/x86_64-linux-gnu:$_root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export PATH=/usr/local/cuda/bin:$PATH
unset _root
