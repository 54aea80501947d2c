0000000000036db0 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<cha
   36db0:	push   %r15
   36db2:	mov    %rdx,%r15
   36db5:	push   %r14
   36db7:	push   %r13
   36db9:	mov    %rdi,%r13
   36dbc:	mov    %rsi,%rdi
   36dbf:	push   %r12
   36dc1:	push   %rbp
   36dc2:	push   %rbx
   36dc3:	sub    $0xc8,%rsp
   36dca:	mov    %rsi,(%rsp)
   36dce:	mov    %rcx,0x40(%rsp)
   36dd3:	mov    %r8,0x48(%rsp)
   36dd8:	call   *%rdx
   36dda:	test   %al,%al
   36ddc:	je     36df0 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36dde:	add    $0xc8,%rsp
   36de5:	pop    %rbx
   36de6:	pop    %rbp
   36de7:	pop    %r12
   36de9:	pop    %r13
   36deb:	pop    %r14
   36ded:	pop    %r15
   36def:	ret
   36df0:	lea    0x270(%r13),%rax
   36df7:	xor    %edx,%edx
   36df9:	movb   $0x0,0x36(%rsp)
   36dfe:	mov    %rax,0x58(%rsp)
   36e03:	mov    0x48(%r13),%rax
   36e07:	movb   $0x0,0x37(%rsp)
   36e0c:	mov    %rax,0x50(%rsp)
   36e11:	movslq 0x50(%r13),%rax
   36e15:	movq   $0x0,0x28(%rsp)
   36e1e:	movq   $0x0,0x18(%rsp)
   36e27:	test   %eax,%eax
   36e29:	movq   $0x0,0x38(%rsp)
   36e32:	cmovs  %rdx,%rax
   36e36:	xor    %r14d,%r14d
   36e39:	movq   $0xffffffffffffffff,0x8(%rsp)
   36e42:	mov    %rax,0x10(%rsp)
   36e47:	lea    0x3e8(,%rax,4),%rax
   36e4f:	mov    %rax,0x20(%rsp)
   36e54:	nopl   0x0(%rax)
   36e58:	mov    0x180(%r13),%rbx
   36e5f:	mov    0x188(%r13),%r12
   36e66:	xor    %ebp,%ebp
   36e68:	cmp    %r12,%rbx
   36e6b:	je     36e84 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36e6d:	nopl   (%rax)
   36e70:	mov    (%rbx),%rdi
   36e73:	mov    (%rdi),%rax
   36e76:	call   *0x38(%rax)
   36e79:	add    $0x8,%rbx
   36e7d:	or     %eax,%ebp
   36e7f:	cmp    %rbx,%r12
   36e82:	jne    36e70 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36e84:	mov    (%rsp),%rdi
   36e88:	call   *%r15
   36e8b:	test   %al,%al
   36e8d:	jne    36fc0 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36e93:	movzbl 0x264(%r13),%eax
   36e9b:	test   %al,%al
   36e9d:	jne    10ce0 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36ea3:	movzbl 0x265(%r13),%eax
   36eab:	test   %al,%al
   36ead:	jne    109d0 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36eb3:	test   %bpl,%bpl
   36eb6:	jne    36f60 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36ebc:	add    $0x1,%r14
   36ec0:	test   $0x3f,%r14b
   36ec4:	je     36f80 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36eca:	cmp    %r14,0x10(%rsp)
   36ecf:	jae    36e58 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36ed1:	cmp    %r14,0x8(%rsp)
   36ed6:	jae    36f70 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36edc:	mov    0x198(%r13),%rax
   36ee3:	cmp    %rax,0x1a0(%r13)
   36eea:	je     36f70 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36ef0:	lea    0x1329(%rip),%r12        # 38220 <gdr::transport::End
   36ef7:	xor    %ebx,%ebx
   36ef9:	jmp    36f2c <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36efb:	nopl   0x0(%rax,%rax,1)
   36f00:	mov    $0x1,%eax
   36f05:	mov    0x198(%r13),%rdi
   36f0c:	mov    0x1a0(%r13),%rsi
   36f13:	add    $0x1,%rbx
   36f17:	sub    %rdi,%rsi
   36f1a:	mov    %ax,0x4(%rdi,%rbp,1)
   36f1f:	sar    $0x3,%rsi
   36f23:	cmp    %rsi,%rbx
   36f26:	jae    3703f <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f2c:	mov    0x180(%r13),%rax
   36f33:	lea    0x0(,%rbx,8),%rbp
   36f3b:	mov    (%rax,%rbx,8),%rdi
   36f3f:	mov    (%rdi),%rax
   36f42:	mov    0x60(%rax),%rax
   36f46:	cmp    %r12,%rax
   36f49:	je     36f00 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f4b:	call   *%rax
   36f4d:	test   %al,%al
   36f4f:	je     36f00 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f51:	mov    $0x5,%eax
   36f56:	jmp    36f05 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f58:	nopl   0x0(%rax,%rax,1)
   36f60:	xor    %r14d,%r14d
   36f63:	jmp    36e58 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f68:	nopl   0x0(%rax,%rax,1)
   36f70:	call   bad0 <sched_yield@plt>
   36f75:	jmp    36e58 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f7a:	nopw   0x0(%rax,%rax,1)
   36f80:	call   b940 <std::chrono::_V2::steady_clock::now()@plt>
   36f85:	cmpb   $0x0,0x36(%rsp)
   36f8a:	mov    %rax,%rbx
   36f8d:	je     36fff <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f8f:	mov    0x18(%rsp),%rax
   36f94:	cmp    %rax,%rbx
   36f97:	jge    36fdb <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36f99:	mov    0x28(%rsp),%rax
   36f9e:	cmp    %rax,%rbx
   36fa1:	mov    0x8(%rsp),%rax
   36fa6:	cmovge 0x20(%rsp),%rax
   36fac:	mov    %rax,0x8(%rsp)
   36fb1:	movb   $0x1,0x36(%rsp)
   36fb6:	jmp    36eca <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36fbb:	nopl   0x0(%rax,%rax,1)
   36fc0:	cmpb   $0x0,0x37(%rsp)
   36fc5:	je     36dde <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36fcb:	movq   $0x0,0x6f8(%r13)
   36fd6:	jmp    36dde <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36fdb:	mov    %r13,%rdi
   36fde:	call   36d70 <gdr::Communicator::checkPeers()>
   36fe3:	mov    0x38(%rsp),%rax
   36fe8:	cmp    %rax,%rbx
   36feb:	jge    10a39 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36ff1:	lea    0x4c4b40(%rbx),%rax
   36ff8:	mov    %rax,0x18(%rsp)
   36ffd:	jmp    36f99 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   36fff:	mov    0x58(%rsp),%rdi
   37004:	call   45c60 <gdr::status::StatusBoard::waitBegan()>
   37009:	mov    %rbx,0x28(%rsp)
   3700e:	imul   $0xf4240,0x50(%rsp),%rax
   37017:	movb   $0x1,0x37(%rsp)
   3701c:	add    %rbx,%rax
   3701f:	mov    %rax,0x38(%rsp)
   37024:	lea    0x4c4b40(%rbx),%rax
   3702b:	mov    %rax,0x18(%rsp)
   37030:	mov    0x20(%rsp),%rax
   37035:	mov    %rax,0x8(%rsp)
   3703a:	jmp    36fb1 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   3703f:	mov    $0x1,%edx
   37044:	call   bb50 <poll@plt>
   37049:	jmp    36e58 <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   3704e:	jmp    10aca <PU>, gdr::FunctionRef<std::__cxx11::basic_stri
   37053:	nop
   37054:	data16 cs nopw 0x0(%rax,%rax,1)
   3705f:	nop
