// Equivalence cases beyond the public vectors, one row per behaviour (docs/contract.md#answer-equivalence, docs/answers.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainEquality, extractAnswer } from '../../src/engine/answers/answers';

const CASES: [a: string, b: string, equal: boolean][] = [
 ['\\frac{x+1}{x-1}','\\frac{1+x}{x-1}',true],['2(x+1)','2x+2',true],['x^2-1','(x-1)(x+1)',true],['a^2-b^2','(a-b)(a+b)',true],
 ['f(x)=x^2','x^2',true],['1011_2','1011',true],['1011_2','11',false],['\\binom{5}{2}','10',true],['6!','720',true],['\\frac{10!}{3!7!}','120',true],
 ['2-3i','-3i+2',true],['\\frac{1+i}{2}','0.5+0.5i',true],['i^2','-1',true],['1+2i','1-2i',false],['e^2','\\mathrm{e}^2',true],['e','2.718281828',true],['\\exp(1)','e',true],
 ['\\$18.90','18.9',true],['\\$ 1,250','1250',true],['18.90 dollars','18.9',true],['.25','\\frac14',true],['3,14','3.14',true],['2,5','2.5',true],['1,2','2,1',true],
 ['\\sqrt{3}','1.732051',true],['\\sqrt3','1.73',false],['e','2.71828',false],['45^{\\circ}','45',true],['45°','45',true],['\\frac{\\pi}{4}','45^\\circ',false],
 ['y=2x+3','2x-y+3=0',true],['x^2+y^2=25','y^2+x^2=25',true],['y=2x+3','2x+3',true],['y=2x+3','y=2x+4',false],
 ['\\frac{3}{6}','\\frac12',true],['1/2','\\frac{1}{2}',true],['\\log_{10} 100','2',true],['\\sin\\frac{\\pi}{6}','\\frac12',true],['\\cos 0','1',true],['\\log_3 81','4',true],['e^{\\ln 2}','2',true],['\\ln e','1',true],['\\log 100','2',true],
 ['x \\geq 2','2 \\leq x',true],['x>-3','-3<x',true],['2x<6','x<3',true],['x<0','(-\\infty,0)',true],['x\\ge 0','[0,\\infty)',true],['+\\infty','\\infty',true],['-\\infty','\\infty',false],
 ['007','7',true],['+5','5',true],['[1,2]\\cup[3,4]','[3,4]\\cup[1,2]',true],['\\left[ 1, 2 \\right)','[1,2)',true],['[1,2]','[1, 2]',true],['[1,2]','(1,2)',false],
 ['\\begin{bmatrix}1\\\\2\\end{bmatrix}','\\begin{pmatrix}1\\\\2\\end{pmatrix}',true],['\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}','\\begin{bmatrix}1&0\\\\0&1\\end{bmatrix}',true],
 ['2\\frac{1}{4}','\\frac94',true],['2 1/4','9/4',true],['-1\\frac{1}{2}','-\\frac32',true],['(B)','B',true],['\\text{(B)}','B',true],['B)','b',true],['Option B','B',true],
 ['-(x-3)','3-x',true],['25\\%','\\frac14',true],['25 percent','25',true],['0.25','25%',true],['\\pi/2','\\frac{\\pi}{2}',true],['2\\pi r','2r\\pi',true],['\\frac{\\pi}{3}','1.047198',true],
 ['x=\\pm 3','\\{3,-3\\}',true],['\\pm\\sqrt{2}','-\\sqrt2,\\sqrt2',true],['x=3\\pm\\sqrt{2}','3+\\sqrt2, 3-\\sqrt2',true],['2^{10}','1024',true],['x^{-1}','\\frac1x',true],['4^{1/2}','2',true],['8^{\\frac{1}{3}}','2',true],
 ['5;','5',true],['1.2\\times 10^{-5}','0.000012',true],['1.2\\times 10^{-5}','1.3\\times 10^{-5}',false],['3 \\times 10^8','300000000',true],['6.022e23','6.022\\times10^{23}',true],
 ['\\{3, 1\\}','\\{1,3\\}',true],['\\emptyset','\\{\\}',true],['\\sqrt{12}','2\\sqrt{3}',true],['\\sqrt[3]{8}','2',true],['\\frac{1}{\\sqrt{2}}','\\frac{\\sqrt{2}}{2}',true],
 ['\\text{yes}','Yes',true],['\\textbf{Yes}','yes',true],['\\text{No solution}','no solution',true],['1\\,000','1000',true],['1 000 000','1000000',true],['12,345','12345',true],
 ['(1,2)','(2,1)',false],['(x,y)=(1,2)','(1,2)',true],['(1,2),(3,4)','(3,4),(1,2)',true],['\\{(1,2),(3,4)\\}','(3,4),(1,2)',true],['(1,3)','\\{1,3\\}',false],
 ['5 \\mbox{ cm}','5',true],['12\\text{ inches}^2','12',true],['5 cm','5',true],['5\\ \\text{cm}','5',true],['10\\text{m}','10',true],['x=2 \\text{ or } x=3','\\{2,3\\}',true],
 ['x \\in \\mathbb{R}','(-\\infty,\\infty)',true],['\\sin(x)','sin x',true],['\\sqrt{x^2+1}','\\sqrt{1+x^2}',true],['\\frac{1}{2}x','\\frac{x}{2}',true],['0.5x','\\frac{x}{2}',true],
 ['x \\neq 3','x\\ne3',true],['\\dfrac{2}{3}\\pi','\\frac{2\\pi}{3}',true],['3\\sqrt{2}','\\sqrt{18}',true],['10^{100}','10^{100}+1',false],['2^{64}','18446744073709551616',true],
 ['\\frac{\\sqrt{5}-1}{2}','0.618034',true],['\\frac{1}{7}','0.142857',true],['\\frac{1}{7}','0.14286',false],['x=1','y=1',true],['\\text{E}','e',true],
 ['y = x^2','x^2',true],['2x+4y=3','4y+2x=3',true],['x+y=1','x+y=2',false],['x=1','x=2',false],['a=3, b=4','(3,4)',true],['\\left\\{1, 2\\right\\}','\\{2,1\\}',true],
 ['(-\\infty, -1) \\cup (1, \\infty)','x<-1 \\text{ or } x>1',true],['(-\\infty, -1) \\cup (1, \\infty)','x<-1 or x>1',true],['\\sqrt{-4}','2i',true],['e^{i\\pi}','-1',true],
 ['\\frac{1}{4}\\%','0.0025',true],['2.5\\times10^{-3}','0.0025',true],['-0','0',true],['0.1+0.2','0.3',true],['1\\frac{1}{2}','1.5',true],['3/2','1 1/2',true],
 ['\\text{None}','none',true],['No','\\text{no}',true],['\\text{(C)}','C',true],['C','\\textbf{C}',true],['(0, 1]','0 < x \\leq 1',true],['[2, \\infty)','x \\geq 2',true],
 ['(-\\infty, \\infty)','\\mathbb{R}',true],['y=\\frac{1}{2}x','x-2y=0',true],['x^2+y^2=1','x^2+y^2-1=0',true],['y=2x+1','y-1=2x',true],
 ['\\begin{pmatrix}1\\\\2\\end{pmatrix}','(1,2)',true],['\\{1,1,2\\}','\\{1,2\\}',true],['1, 2, and 3','\\{1,2,3\\}',true],['101_2','101_{2}',true],['A3_{16}','a3_{16}',true],
 ['3.0 \\times 10^8','3\\times10^8',true],['5 \\times 10^{-3}','0.005',true],['\\dfrac{\\sqrt{3}}{3}','\\frac{1}{\\sqrt{3}}',true],['\\sqrt{\\frac{1}{2}}','\\frac{\\sqrt2}{2}',true],
 ['\\pm\\frac{1}{2}','\\frac12, -\\frac12',true],['2 \\pm \\sqrt{3}','2+\\sqrt3, 2-\\sqrt3',true],['-(-3)','3',true],['{10 \\choose 3}','120',true],['\\sin 30^\\circ','\\frac12',true],['\\tan 45^\\circ','1',true],['\\cos(60^\\circ)','0.5',true],
 ['\\log_{2}{8}','3',true],['\\ln(e^2)','2',true],['\\log 1000','3',true],['x','X',false],['ab','AB',true],['2ab','2ba',true],['\\frac{1}{2}\\text{ hours}','0.5',true],
 ['30^\\circ','\\frac{\\pi}{6}',false],['1, 2','1, 3',false],['\\{1,2\\}','\\{1,2,2,3\\}',false],['\\infty','-\\infty',false],['x^2','x^3',false],['\\sqrt{2}','1.414',false],['\\sqrt{2}','1.414214',true],
 ['P(x) = x^2 + 1','p(x)=x^2+1',true],['f(x)=2x','g(x)=2x',true],['y=2x','x=2y',false],['x=y','y=x',true],['f(x)=2x','f(x)=3x',false],
 ['1.5 x 10^3','1500',true],['1.5 \\times 10^3','1501',false],['\\left[\\begin{array}{cc}1&2\\\\3&4\\end{array}\\right]','\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}',true],['[A]','a',true],
 ['\\frac{x^2-1}{x-1}','x+1',true],['\\ln(x^2)','2\\ln x',true],['e^{x+y}','e^xe^y',true],['\\frac{1}{x}+\\frac{1}{y}','\\frac{x+y}{xy}',true],['x(x+1)','x^2+x',true],['x2','2x',true],
 ['\\frac{1}{i}','-i',true],['(1+i)^2','2i',true],['e^{-1}','\\frac{1}{e}',true],['\\frac{2}{3}','0.666667',true],['\\frac{2}{3}','0.6667',false],['1e6','10^6',true],['12.5\\%','\\frac18',true],
 ['2\\frac{3}{4}','2.75',true],['x^{1/2}','\\sqrt{x}',true],['x^\\frac12','\\sqrt x',true],['\\sqrt{50}','5\\sqrt{2}',true],['\\sqrt[4]{16}','2',true],['\\arctan 1','\\frac{\\pi}{4}',true],
 ['\\sin^{-1}(1)','\\frac\\pi2',true],['\\log_4 2','\\frac12',true],['\\log_{\\frac12} 4','-2',true],['x \\leq 3','x<3',false],['(0,1)\\cup(1,2)','(0,2)',false],['[0,1]\\cup[1,2]','[0,2]',true],
 ['2,50','2.5',true],['3,14159','\\pi',false],['x+y=3','3',false],['2y=x+3','y = \\frac{x+3}{2}',true],['5\\text{ m/s}','5',true],['5\\,\\text{cm}','5',true],
 ['\\sqrt2 x<1','x < \\frac{\\sqrt2}{2}',true],['\\pi x \\ge 2','x\\ge \\frac{2}{\\pi}',true],['\\pi x \\ge 2','x> \\frac{2}{\\pi}',false],
 ['a = 2, b = 3','a=3, b=2',false],['a=2,b=3','b=3, a=2',true],['a=2,b=3','(2,3)',true],['x=1, y=2','(x,y)=(1,2)',true],
 ['x²','x^2',true],['x²','2x',false],['2⁻¹','0.5',true],['½','\\frac12',true],['∅','\\{\\}',true],['√2','\\sqrt{2}',true],['3π','3\\pi',true],['1.5×10³','1500',true],
 ['x**2','x^2',true],['2**10','1024',true],['B: 4.5 eV','B',true],['(C) 12','C',true],['(C) 12','12',false],['sqrt(2)','\\sqrt2',true],['sqrt(x+1)','\\sqrt{x+1}',true],['A=5','A',false],['A+B','A',false],
 ['2x+3=7','x=2',true],['x=3','3x=9',true],['x=3','2x+3=7',false],['x=99998','x=100000',false],['1.234,5','1234.5',true],['1.000.000','1000000',true],['1.000,5','1000.5',true],
 ['x^2<4','-2<x<2',true],['x^2\\le 4','[-2,2]',true],['x^2<4','[-2,2]',false],['|x|<1','-1<x<1',true],['x^2<4','|x|<2',true],['x^2 \\ge 4','(-\\infty,-2]\\cup[2,\\infty)',true],
 ['(x-1)(x-3)<0','(1,3)',true],['(x-1)(x-3)<0','(1,3]',false],['x^2<4','y^2<4',false],['x^2<2','(-\\sqrt2,\\sqrt2)',true],['x^2 < 4','x<2',false],
 ['Evelyn!','\\text{evelyn}',true],['"yes"','Yes',true],['\\text{odd}','\\text{odd number}',false],
 ['\\pi x','3.14159x',false],['2\\sqrt2 x','2.8284271x',true],['0.3333333x','\\frac{x}{3}',true],['0.333x','\\frac{x}{3}',false],
 ['2+2=4','4',true],['5+5+1=11','11',true],['7=11a+c','11a+c=7',true],['a=b','b=a',true],['x^2+y^2=9','x^2+y^2=3^2',true],['2x+4y-3=0','x+2y=1.5',true],['y=x^2','x^2=y',true],
];

test('equivalence table', () => {
  const wrong = CASES.filter(([a, b, eq]) => explainEquality(a, b).equal !== eq).map(([a, b, eq]) => `${a} | ${b} (expected ${eq})`);
  assert.deepEqual(wrong, []);
});

test('equivalence table is symmetric', () => {
  for (const [a, b] of CASES) assert.equal(explainEquality(a, b).equal, explainEquality(b, a).equal, `${a} | ${b}`);
});

const EXTRACTIONS: [response: string, answer: string | null][] = [
 ['**Final Answer**: 42','42'],['**Final Answer:** 42','42'],['Answer: B) 4.5','B'],['I think the correct choice is (B).',null],['The answer is B because the rest is fine.','B'],
 ['Thus, the final answer is 12 apples.','12 apples'],['The final answer is: there are 12 ways.','12 ways'],['The result is −3','-3'],['So 25% of them.','25\\%'],['\\boxed5','5'],['\\boxed{\\boxed{5}}','5'],
 ['The answer is \\frac{1}{2} since 2 > 1','\\frac{1}{2}'],['The answer is 12, which is even.','12'],
];

test('extraction table', () => {
  for (const [r, e] of EXTRACTIONS) assert.equal(extractAnswer(r), e, r);
});
