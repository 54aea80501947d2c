0000000000036940 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_traits<
   36940:	push   %r15
   36942:	mov    %rdx,%r15
   36945:	push   %r14
   36947:	push   %r13
   36949:	mov    %rdi,%r13
   3694c:	mov    %rsi,%rdi
   3694f:	push   %r12
   36951:	push   %rbp
   36952:	push   %rbx
   36953:	sub    $0xa8,%rsp
   3695a:	mov    %rsi,0x8(%rsp)
   3695f:	mov    %rcx,0x28(%rsp)
   36964:	mov    %r8,0x30(%rsp)
   36969:	call   *%rdx
   3696b:	test   %al,%al
   3696d:	jne    36aa3 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36973:	lea    0x270(%r13),%rax
   3697a:	movb   $0x0,0x17(%rsp)
   3697f:	xor    %r14d,%r14d
   36982:	mov    %rax,0x38(%rsp)
   36987:	movq   $0x0,0x18(%rsp)
   36990:	movq   $0x0,0x20(%rsp)
   36999:	nopl   0x0(%rax)
   369a0:	mov    0x180(%r13),%rbx
   369a7:	mov    0x188(%r13),%r12
   369ae:	xor    %ebp,%ebp
   369b0:	cmp    %r12,%rbx
   369b3:	je     369cc <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   369b5:	nopl   (%rax)
   369b8:	mov    (%rbx),%rdi
   369bb:	mov    (%rdi),%rax
   369be:	call   *0x38(%rax)
   369c1:	add    $0x8,%rbx
   369c5:	or     %eax,%ebp
   369c7:	cmp    %rbx,%r12
   369ca:	jne    369b8 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   369cc:	mov    0x8(%rsp),%rdi
   369d1:	call   *%r15
   369d4:	test   %al,%al
   369d6:	jne    36a98 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   369dc:	movzbl 0x264(%r13),%eax
   369e4:	test   %al,%al
   369e6:	jne    10c6e <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   369ec:	movzbl 0x265(%r13),%eax
   369f4:	test   %al,%al
   369f6:	jne    10c05 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   369fc:	test   %bpl,%bpl
   369ff:	jne    36a40 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a01:	add    $0x1,%r14d
   36a05:	test   $0x3f,%r14b
   36a09:	je     36a50 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a0b:	mov    0x50(%r13),%eax
   36a0f:	cmp    %r14d,%eax
   36a12:	jge    369a0 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a14:	lea    0x3e8(,%rax,4),%eax
   36a1b:	cmp    %r14d,%eax
   36a1e:	jge    36a34 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a20:	mov    0x198(%r13),%rax
   36a27:	cmp    %rax,0x1a0(%r13)
   36a2e:	jne    36ab8 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a34:	call   bad0 <sched_yield@plt>
   36a39:	jmp    369a0 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a3e:	xchg   %ax,%ax
   36a40:	xor    %r14d,%r14d
   36a43:	jmp    369a0 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a48:	nopl   0x0(%rax,%rax,1)
   36a50:	call   b940 <std::chrono::_V2::steady_clock::now()@plt>
   36a55:	cmpb   $0x0,0x17(%rsp)
   36a5a:	mov    %rax,%rbx
   36a5d:	je     36b3b <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a63:	mov    0x18(%rsp),%rax
   36a68:	cmp    %rax,%rbx
   36a6b:	jl     36a0b <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a6d:	mov    %r13,%rdi
   36a70:	call   36900 <gdr::Communicator::checkPeers()>
   36a75:	mov    0x20(%rsp),%rax
   36a7a:	cmp    %rax,%rbx
   36a7d:	jge    10992 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a83:	lea    0x4c4b40(%rbx),%rax
   36a8a:	mov    %rax,0x18(%rsp)
   36a8f:	jmp    36a0b <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36a94:	nopl   0x0(%rax)
   36a98:	cmpb   $0x0,0x17(%rsp)
   36a9d:	jne    36b2b <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36aa3:	add    $0xa8,%rsp
   36aaa:	pop    %rbx
   36aab:	pop    %rbp
   36aac:	pop    %r12
   36aae:	pop    %r13
   36ab0:	pop    %r14
   36ab2:	pop    %r15
   36ab4:	ret
   36ab5:	nopl   (%rax)
   36ab8:	lea    0x1271(%rip),%r12        # 37d30 <gdr::transport::Endpoint::wantsWrite() 
   36abf:	xor    %ebx,%ebx
   36ac1:	jmp    36af0 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36ac3:	nopl   0x0(%rax,%rax,1)
   36ac8:	mov    $0x1,%eax
   36acd:	mov    0x198(%r13),%rdi
   36ad4:	mov    0x1a0(%r13),%rsi
   36adb:	add    $0x1,%rbx
   36adf:	sub    %rdi,%rsi
   36ae2:	mov    %ax,0x4(%rdi,%rbp,1)
   36ae7:	sar    $0x3,%rsi
   36aeb:	cmp    %rsi,%rbx
   36aee:	jae    36b1c <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36af0:	mov    0x180(%r13),%rax
   36af7:	lea    0x0(,%rbx,8),%rbp
   36aff:	mov    (%rax,%rbx,8),%rdi
   36b03:	mov    (%rdi),%rax
   36b06:	mov    0x60(%rax),%rax
   36b0a:	cmp    %r12,%rax
   36b0d:	je     36ac8 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36b0f:	call   *%rax
   36b11:	test   %al,%al
   36b13:	je     36ac8 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36b15:	mov    $0x5,%eax
   36b1a:	jmp    36acd <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36b1c:	mov    $0x1,%edx
   36b21:	call   bb50 <poll@plt>
   36b26:	jmp    369a0 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36b2b:	movq   $0x0,0x6f8(%r13)
   36b36:	jmp    36aa3 <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36b3b:	mov    0x38(%rsp),%rdi
   36b40:	call   45770 <gdr::status::StatusBoard::waitBegan()>
   36b45:	imul   $0xf4240,0x48(%r13),%rax
   36b4d:	movb   $0x1,0x17(%rsp)
   36b52:	add    %rbx,%rax
   36b55:	mov    %rax,0x20(%rsp)
   36b5a:	lea    0x4c4b40(%rbx),%rax
   36b61:	mov    %rax,0x18(%rsp)
   36b66:	jmp    36a0b <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
   36b6b:	jmp    10a1c <PU>, gdr::FunctionRef<std::__cxx11::basic_string<char, std::char_t
