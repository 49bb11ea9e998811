// Generated expectations: each was rendered by Python Jinja2 3.1 in Hugging Face's environment
// (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, json.dumps tojson, strftime_now
// pinned to 2026-01-15); the interpreter must reproduce them byte for byte.
#pragma once
#include <vector>

namespace kairo::jinja::testing {

struct RenderCase {
  const char* name;
  const char* source;
  const char* context_json;
  const char* expected;
};

inline const std::vector<RenderCase>& render_cases() {
  static const std::vector<RenderCase> cases = {
      {"IfElifElse",
       R"J({% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %};{% endfor %})J",
       R"J({})J",
       R"J(one;two;many;)J"},
      {"ForLoopVariables",
       R"J({% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %})J",
       R"J({})J",
       R"J(1032TrueFalse3|2121FalseFalse3|3210FalseTrue3|)J"},
      {"ForPrevNextCycle",
       R"J({% for x in 'abc' %}[{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('o', 'e') }}]{% endfor %})J",
       R"J({})J",
       R"J([bo][ace][bo])J"},
      {"ForElse",
       R"J({% for x in [] %}a{% else %}empty{% endfor %}{% for x in none_var %}b{% else %}undef{% endfor %})J",
       R"J({})J",
       R"J(emptyundef)J"},
      {"ForFilter",
       R"J({% for x in [1, 2, 3, 4, 5] if x is odd %}{{ loop.index }}/{{ loop.length }}:{{ x }} {% endfor %})J",
       R"J({})J",
       R"J(1/3:1 2/3:3 3/3:5 )J"},
      {"ForUnpackItems",
       R"J({% for k, v in {'b': 1, 'a': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for k, v in d|items %}{{ k }}{{ v }}{% endfor %})J",
       R"J({"d": {"z": 1, "y": 2}})J",
       R"J(b=1;a=2;z1y2)J"},
      {"ForOverDictAndString",
       R"J({% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}-{% for c in 'héllo' %}{{ c }}.{% endfor %})J",
       R"J({})J",
       R"J(xy-h.é.l.l.o.)J"},
      {"BreakContinue",
       R"J({% for i in range(10) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 4 %}{% break %}{% endif %}{{ i }}{% endfor %})J",
       R"J({})J",
       R"J(023)J"},
      {"NestedLoops",
       R"J({% for i in range(2) %}{% for j in range(3) %}{{ i }}{{ j }}{{ loop.index }} {% endfor %}{{ loop.index }}|{% endfor %})J",
       R"J({})J",
       R"J(001 012 023 1|101 112 123 2|)J"},
      {"LoopScoping",
       R"J({% set x = 0 %}{% for i in range(3) %}{{ x }}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }})J",
       R"J({})J",
       R"J(0101010)J"},
      {"IfDoesNotScope",
       R"J({% if true %}{% set y = 5 %}{% endif %}{{ y }})J",
       R"J({})J",
       R"J(5)J"},
      {"SetTupleAndWith",
       R"J({% set a, b = 1, 2 %}{{ a }}{{ b }} {% with z = 3 %}{{ z }}{% endwith %}[{{ z }}])J",
       R"J({})J",
       R"J(12 3[])J"},
      {"SetBlock",
       R"J({% set x %}ab{{ 1 }}{% endset %}[{{ x }}]{% set y | upper %}cd{% endset %}{{ y }})J",
       R"J({})J",
       R"J([ab1]CD)J"},
      {"Namespace",
       R"J({% set ns = namespace(a=1, found=false) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.a }} {{ ns.found }} [{{ ns.missing }}])J",
       R"J({})J",
       R"J(4 True [])J"},
      {"MacroDefaults",
       R"J({% macro f(a, b=2, c='x') %}{{ a }}-{{ b }}-{{ c }}{% endmacro %}{{ f(1) }} {{ f(1, 3) }} {{ f(c=5, a=0) }} [{{ f() }}])J",
       R"J({})J",
       R"J(1-2-x 1-3-x 0-2-5 [-2-x])J"},
      {"MacroSeesGlobalsAtCallTime",
       R"J({% set g = 1 %}{% macro m() %}{{ g }}{% endmacro %}{% set g = 2 %}{{ m() }})J",
       R"J({})J",
       R"J(2)J"},
      {"MacroRecursion",
       R"J({% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }})J",
       R"J({})J",
       R"J(120)J"},
      {"CallBlock",
       R"J({% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold{% endcall %}{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) each([1, 2]) %}({{ v * 10 }}){% endcall %})J",
       R"J({})J",
       R"J(<b>bold</b>(10)(20))J"},
      {"FilterBlock",
       R"J({% filter upper %}abc{{ 'd' }}{% endfilter %})J",
       R"J({})J",
       R"J(ABCD)J"},
      {"RawBlock",
       R"J({% raw %}{{ x }}{% if %}{% endraw %}|  {% raw -%}  a {{ b }}  {%- endraw %}|)J",
       R"J({})J",
       R"J({{ x }}{% if %}|  a {{ b }}|)J"},
      {"Comments",
       R"J(a{# comment #}b
  {# own line #}
c {#- trim -#}  d)J",
       R"J({})J",
       R"J(ab
cd)J"},
      {"TrimAndLstripBlocks",
       R"J(a
  {% if true %}
  yes
  {% endif %}
b
)J",
       R"J({})J",
       R"J(a
  yes
b)J"},
      {"PlusDisablesStripping",
       R"J(a
  {%+ if true %}
  yes
  {%+ endif +%}
b)J",
       R"J({})J",
       R"J(a
    yes
  
b)J"},
      {"DashStripping",
       R"J(x  
  {%- if true -%}  
  y  
  {%- endif -%}
  z {{- ' w ' -}}  v)J",
       R"J({})J",
       R"J(xyz w v)J"},
      {"VariableTagsNotLstripped",
       R"J(a
  {{ 'v' }}
  {% set q = 1 %}
b)J",
       R"J({})J",
       R"J(a
  v
b)J"},
      {"CrLfNormalized",
       R"J(a
{% if true %}
b
{% endif %}
c
)J",
       R"J({})J",
       R"J(a
b
c)J"},
      {"Arithmetic",
       R"J({{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -10 % 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7 / 2 }} {{ 6 / 2 }} {{ 10 - 3 * 2 ** 2 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 10.5 % 3 }} {{ 7 // 2.0 }} {{ 1 + 1.5 }} {{ true + 1 }})J",
       R"J({})J",
       R"J(3 -4 -2 2 1024 0.5 3.5 3.0 -2 64 4 1.5 3.0 2.5 2)J"},
      {"Floats",
       R"J({{ 1.0 }} {{ 1e20 }} {{ 1.5e-7 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1234567890123456.0 }} {{ 0.0001 }} {{ 0.00001 }} {{ -0.0 }} {{ 3.0 * 2 }} {{ 1 / 3 }})J",
       R"J({})J",
       R"J(1.0 1e+20 1.5e-07 0.30000000000000004 1e+16 1234567890123456.0 0.0001 1e-05 -0.0 6.0 0.3333333333333333)J"},
      {"Concatenation",
       R"J({{ 'a' ~ 1 ~ none ~ undefined_name ~ [1] }} {{ 'a' + 'b' }} {{ [1, 2] + [3] }} {{ 'ab' * 3 }} {{ 2 * [0] }})J",
       R"J({})J",
       R"J(a1None[1] ab [1, 2, 3] ababab [0, 0])J"},
      {"Comparisons",
       R"J({{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ [1, 2] == [1, 2] }} {{ {'a': 1} == {'a': 1} }} {{ none == false }} {{ 'a' < 'b' }} {{ 2 >= 2 }} {{ [1] < [2] }})J",
       R"J({})J",
       R"J(True False True True True True False True True True)J"},
      {"Membership",
       R"J({{ 'b' in 'abc' }} {{ 'x' not in ['x'] }} {{ 1 in {1: 2} }} {{ 'k' in d }} {{ 'tool_calls' in m }} {{ 'a' in undefined_name }})J",
       R"J({"d": {"k": 1}, "m": {"role": "user"}})J",
       R"J(True False True True False False)J"},
      {"Logic",
       R"J({{ 1 and 2 }} {{ 0 or 'x' }} [{{ '' and 1 }}] {{ none or none }} {{ not 0 }} {{ not [] and 1 }})J",
       R"J({})J",
       R"J(2 x [] None True 1)J"},
      {"InlineIf",
       R"J({{ 'y' if x else 'n' }} [{{ 'y' if false }}] {{ 1 if true else 2 if false else 3 }})J",
       R"J({"x": 1})J",
       R"J(y [] 1)J"},
      {"Slicing",
       R"J({{ [1, 2, 3][::-1] }} {{ 'hello'[1:3] }} {{ 'hello'[-2:] }} {{ [1, 2, 3, 4, 5][1::2] }} {{ 'héllo'[1:3] }} {{ m[1:] }} {{ m[:-1] }} {{ 'abc'[10:] }} {{ [1,2,3][-10:2] }} {{ 'abcdef'[5:1:-2] }})J",
       R"J({"m": [1, 2, 3]})J",
       R"J([3, 2, 1] el lo [2, 4] él [2, 3] [1, 2]  [1, 2] fd)J"},
      {"Subscripts",
       R"J({{ messages[0]['role'] }} {{ messages[0].role }} {{ messages[-1].content }} {{ messages|length }} {{ 'abc'[1] }} {{ 'héllo'[1] }} {{ messages.0.role }})J",
       R"J({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]})J",
       R"J(user user yo 2 b é user)J"},
      {"Literals",
       R"J({{ [1, 'a', none, true, 1.5, {'k': [1]}] }} {{ ('a', 1) }} {{ (1,) }} {{ () }} {{ {'q': "it's"} }} {{ "a\tb\n" | tojson }} {{ 'x' 'y' }} {{ 0x1F }} {{ 1_000 }})J",
       R"J({})J",
       R"J([1, 'a', None, True, 1.5, {'k': [1]}] ('a', 1) (1,) () {'q': "it's"} "a\tb\n" xy 31 1000)J"},
      {"StringEscapes",
       R"J({{ 'tab\there' }}|{{ "q\"uote" }}|{{ '\u00e9\x41\101' }}|{{ 'back\\slash' }}|{{ 'unknown\d' }})J",
       R"J({})J",
       R"J(tab	here|q"uote|éAA|back\slash|unknown\d)J"},
      {"PrintingValues",
       R"J({{ true }} {{ True }} {{ none }} {{ None }} {{ undefined_name }}| {{ [none, true] }} {{ {'a': {'b': none}} }} {{ "it's" }} {{ ['it\'s', 'say "hi"'] }} {{ 3.0 }})J",
       R"J({})J",
       R"J(True True None None | [None, True] {'a': {'b': None}} it's ["it's", 'say "hi"'] 3.0)J"},
      {"FilterTrimLowerUpper",
       R"J([{{ '  a b  '|trim }}] [{{ 'xxaxx'|trim('x') }}] {{ 'AbC'|lower }} {{ 'AbC'|upper }} {{ 'hELLO wORLD'|capitalize }} {{ 'hello world-foo(bar'|title }} {{ 'ÉCOLE'|lower }} {{ 'straße'|upper }})J",
       R"J({})J",
       R"J([a b] [a] abc ABC Hello world Hello World-Foo(Bar école STRASSE)J"},
      {"FilterTojson",
       R"J({{ d|tojson }} {{ 'é"\n\u2028'|tojson }} {{ [1.0, 2.5, 1e100, none, true] | tojson }} {{ {}|tojson(indent=2) }} {{ []|tojson(indent=2) }} {{ {'a': 1}|tojson(separators=(',', ':')) }} {{ 5|tojson }})J",
       R"J({"d": {"z": 1, "a": [1, {"b": null}]}})J",
       R"J({"z": 1, "a": [1, {"b": null}]} "é\"\n " [1.0, 2.5, 1e+100, null, true] {} [] {"a":1} 5)J"},
      {"FilterTojsonIndent",
       R"J({{ d|tojson(indent=4) }}
{{ d|tojson(indent='	') }}
{{ d|tojson(indent=0) }})J",
       R"J({"d": {"name": "f", "args": {"x": [1, 2], "y": {}}, "e": []}})J",
       R"J({
    "name": "f",
    "args": {
        "x": [
            1,
            2
        ],
        "y": {}
    },
    "e": []
}
{
	"name": "f",
	"args": {
		"x": [
			1,
			2
		],
		"y": {}
	},
	"e": []
}
{
"name": "f",
"args": {
"x": [
1,
2
],
"y": {}
},
"e": []
})J"},
      {"FilterLengthCount",
       R"J({{ [1, 2]|length }} {{ 'héllo'|length }} {{ {'a': 1}|length }} {{ undefined_name|length }} {{ 'abc'|count }})J",
       R"J({})J",
       R"J(2 5 1 0 3)J"},
      {"FilterReplaceJoin",
       R"J({{ 'aXbX'|replace('X', 'y') }} {{ 'aXbX'|replace('X', 'y', 1) }} {{ 'ab'|replace('', '-') }} {{ [1, 2, 3]|join('-') }} {{ [1, 2, 3]|join }} {{ users|join(', ', attribute='name') }})J",
       R"J({"users": [{"name": "a"}, {"name": "b"}]})J",
       R"J(ayby aybX -a-b- 1-2-3 123 a, b)J"},
      {"FilterDefault",
       R"J({{ x|default('d') }} [{{ ''|default('d') }}] {{ ''|default('d', true) }} {{ none|d('n') }} {{ false|d('n', boolean=true) }})J",
       R"J({})J",
       R"J(d [] d None n)J"},
      {"FilterFirstLast",
       R"J({{ [1, 2]|first }} {{ [1, 2]|last }} {{ 'abc'|first }} {{ 'abc'|last }} [{{ []|first }}])J",
       R"J({})J",
       R"J(1 2 a c [])J"},
      {"FilterSelectReject",
       R"J({{ users|selectattr('admin')|map(attribute='name')|list }} {{ users|rejectattr('admin')|map(attribute='name')|list }} {{ [1, 2, 3, 4]|select('even')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} {{ users|selectattr('role', 'equalto', 'u')|list|length }} {{ users|selectattr('role', '==', 'a')|map(attribute='name')|first }} {{ [0, 1, '', 'x']|select|list }})J",
       R"J({"users": [{"name": "a", "admin": true, "role": "a"}, {"name": "b", "role": "u"}]})J",
       R"J(['a'] ['b'] [2, 4] [2, 4] 1 a [1, 'x'])J"},
      {"FilterMap",
       R"J({{ ['a', 'b']|map('upper')|list }} {{ users|map(attribute='name')|join(',') }} {{ users|map(attribute='missing', default='?')|list }} {{ [1.6, 2.4]|map('round')|list }} {{ [[1,2]]|map(attribute='1')|list }})J",
       R"J({"users": [{"name": "a"}, {"name": "b"}]})J",
       R"J(['A', 'B'] a,b ['?', '?'] [2.0, 2.0] [2])J"},
      {"FilterItemsListString",
       R"J({{ {'a': 1}|items|list }} {{ 'ab'|list }} {{ [1, 2]|list }} {{ 3|string + 'a' }} {{ none|string }} {{ [1, 'a']|string }})J",
       R"J({})J",
       R"J([('a', 1)] ['a', 'b'] [1, 2] 3a None [1, 'a'])J"},
      {"FilterNumbers",
       R"J({{ '42'|int }} {{ '4.5'|float }} {{ 'x'|int }} {{ '3.9'|int }} {{ 3.9|int }} {{ '0x1A'|int(0, 16) }} {{ 'abc'|float }} {{ -3|abs }} {{ -2.5|abs }} {{ 'z'|int(7) }} {{ ' 12 '|int }} {{ true|int }})J",
       R"J({})J",
       R"J(42 4.5 0 3 3 26 0.0 3 2.5 7 12 1)J"},
      {"FilterRound",
       R"J({{ 2.567|round(2) }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.567|round(1, 'floor') }} {{ 2.521|round(1, 'ceil') }} {{ 7|round }} {{ 2.675|round(2) }} {{ -1.5|round }})J",
       R"J({})J",
       R"J(2.57 2.0 4.0 2.5 2.6 7 2.67 -2.0)J"},
      {"FilterUniqueReverseSort",
       R"J({{ [1, 2, 2, 'a', 'A']|unique|list }} {{ [1, 2, 3]|reverse|list }} {{ 'abc'|reverse }} {{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['b', 'A', 'a']|sort }} {{ ['b', 'A', 'a']|sort(case_sensitive=true) }} {{ users|sort(attribute='age')|map(attribute='n')|join }})J",
       R"J({"users": [{"n": "x", "age": 3}, {"n": "y", "age": 1}, {"n": "z", "age": 2}]})J",
       R"J([1, 2, 'a'] [3, 2, 1] cba [1, 2, 3] [3, 2, 1] ['A', 'a', 'b'] ['A', 'a', 'b'] yzx)J"},
      {"FilterDictsort",
       R"J({{ {'b': 1, 'a': 2, 'C': 0}|dictsort }} {{ {'b': 1, 'a': 2}|dictsort(by='value') }} {{ {'b': 1, 'a': 2}|dictsort(reverse=true) }})J",
       R"J({})J",
       R"J([('a', 2), ('b', 1), ('C', 0)] [('b', 1), ('a', 2)] [('b', 1), ('a', 2)])J"},
      {"FilterIndent",
       R"J({{ 'a
b

c'|indent(2) }}|{{ 'a
b'|indent(2, true) }}|{{ 'a
b
'|indent(first=true) }}|{{ 'a

b'|indent(2, blank=true) }}|{{ 'x
y'|indent('> ') }})J",
       R"J({})J",
       R"J(a
  b

  c|  a
  b|    a
    b
|a
  
  b|x
> y)J"},
      {"FilterMisc",
       R"J({{ 'a b  c'|wordcount }} {{ 'a&<>"\''|escape }} {{ '<b>'|e }} {{ 'x'|safe }} {{ 'x'|center(5) }}| {{ [1, 2, 3]|sum }} {{ [1, 5, 3]|max }} {{ [1, 5, 3]|min }} {{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ 'hello world foo'|truncate(11) }} {{ '%s-%s'|format('a', 1) }} {{ d|attr('k') }})J",
       R"J({"d": {"k": "v"}})J",
       R"J(3 a&amp;&lt;&gt;&#34;&#39; &lt;b&gt; x   x  | 6 5 1 [[1, 2], [3, 4], [5]] hello world foo a-1 )J"},
      {"Tests",
       R"J({{ 1 is number }} {{ true is number }} {{ true is integer }} {{ 1.0 is integer }} {{ 1.0 is float }} {{ 'a' is iterable }} {{ 1 is iterable }} {{ {} is sequence }} {{ 'a' is sequence }} {{ none is none }} {{ x is undefined }} {{ x is defined }} {{ true is boolean }} {{ 1 is true }} {{ true is true }} {{ false is false }} {{ 3 is odd }} {{ 4 is even }} {{ [] is mapping }} {{ {} is mapping }} {{ 'a' is string }} {{ 1 is string }})J",
       R"J({})J",
       R"J(True True False False True True False True True True True False True False True True True True False True True False)J"},
      {"TestsWithArguments",
       R"J({{ 5 is divisibleby 3 }} {{ 6 is divisibleby(3) }} {{ 1 is in [1, 2] }} {{ 'a' is eq 'a' }} {{ 1 is ne 2 }} {{ 'a' is equalto 'b' }} {{ 3 is gt 2 }} {{ 3 is lt 2 }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ range is callable }} {{ none is sameas none }} {{ x is not defined }} {{ not x is defined }})J",
       R"J({})J",
       R"J(False True True True True False True False True True True True True True)J"},
      {"StringMethods",
       R"J({{ 'abc'.startswith('a') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'aXbX'.replace('X', 'y') }} {{ 'aXbX'.replace('X', 'y', 1) }} {{ 'ab'.upper() }} {{ 'AB'.lower() }} [{{ '  x '.strip() }}|{{ '  x '.lstrip() }}|{{ '  x '.rstrip() }}|{{ 'xxaxx'.strip('x') }}] {{ "they're bill's 1st".title() }} {{ 'hello'.capitalize() }})J",
       R"J({})J",
       R"J(True True ayby aybX AB ab [x|x |  x|a] They'Re Bill'S 1St Hello)J"},
      {"StringSplit",
       R"J({{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a-b-c'.rsplit('-', 1) }} {{ 'x</think>y'.split('</think>')[-1] }} {{ 'l1
l2
l3'.splitlines() }})J",
       R"J({})J",
       R"J(['a', 'b', '', 'c'] ['a', 'b'] ['a', 'b c'] ['a-b', 'c'] y ['l1', 'l2', 'l3'])J"},
      {"StringMisc",
       R"J({{ ''.join(['a', 'b']) }} {{ 'Hello'.find('l') }} {{ 'héllo'.find('l') }} {{ 'abcb'.count('b') }} {{ '{} {}'.format(1, 'b') }} {{ '{0}-{name}'.format('a', name='n') }} {{ '%s and %s' % ('a', 'b') }} {{ '%05.2f' % 3.14159 }} {{ '%d%%' % 5 }} {{ '  '.isspace() }} {{ '12'.isdigit() }})J",
       R"J({})J",
       R"J(ab 2 2 2 1 b a-n a and b 03.14 5% True True)J"},
      {"PercentFormat",
       R"J({{ '%5s|%-4s|%.2s|%c%c' % ('é', 'ab', 'xyz', 65, 'z') }} {{ '%05d|%+d|%x|%#x|%o|%5.1f|%e|%g|%d' % (42, 5, 255, 255, 8, 3.14159, 1234.5, 0.0001, 3.99) }} {{ '%(a)s-%(b)d' % {'a': 'x', 'b': 2} }} {{ '%d' % 1e20 }} {{ '%s' % [1, 'a'] }})J",
       R"J({})J",
       R"J(    é|ab  |xy|Az 00042|+5|ff|0xff|10|  3.1|1.234500e+03|0.0001|3 x-2 100000000000000000000 [1, 'a'])J"},
      {"DictMethods",
       R"J({{ d.get('a') }} {{ d.get('b') }} {{ d.get('b', 5) }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }} {{ d['items'] }} {{ dict(x=1, y=2) }})J",
       R"J({"d": {"a": 1, "items": "key"}})J",
       R"J(1 None 5 ['a', 'items'] [1, 'key'] [('a', 1), ('items', 'key')] key {'x': 1, 'y': 2})J"},
      {"Globals",
       R"J({{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ strftime_now('%Y-%m-%d %d %b %Y %A') }} {{ strftime_now is defined }})J",
       R"J({})J",
       R"J([0, 1, 2] [1, 4, 7] [5, 3, 1] 2026-01-15 15 Jan 2026 Thursday True)J"},
      {"UnknownFilterInUntakenBranch",
       R"J(a{% if false %}{{ x|nosuchfilter }}{% endif %}b)J",
       R"J({})J",
       R"J(ab)J"},
      {"Undefined",
       R"J([{{ x }}] [{{ d.missing }}] [{{ d.a.missing }}] [{{ 'abc'.nope }}] [{{ none.nope }}] {{ x is none }} {{ x == x }} {{ x|list }} {{ d.missing is defined }})J",
       R"J({"d": {"a": {"c": 1}}})J",
       R"J([] [] [] [] [] False True [] False)J"},
      {"SelectAndMapOfNoneAreEmpty",
       R"J({{ none|selectattr('a')|list }} {{ x|selectattr('type', 'equalto', 'function')|list }} {{ none|select|list }} {{ none|reject('none')|list }} {{ none|rejectattr('a')|list }} {{ none|map(attribute='a')|list }} {{ none|map('upper')|list }} {{ none|map|list }} {{ 0|select|list }} {{ ''|map('upper')|list }} {{ d.tools|selectattr('name')|list|length }} {{ (none|select|list) is sequence }})J",
       R"J({"d": {"tools": null}})J",
       R"J([] [] [] [] [] [] [] [] [] [] 0 True)J"},
      {"MarkupEscapesWhatItIsCombinedWith",
       R"J({{ '<a>'|safe + '<b>' }} {{ '<b>' + '<a>'|safe }} {{ '<a>'|safe ~ '<b>' }} {{ ('x'|safe + 'y') is escaped }} {{ 'x' is escaped }} {{ '<'|e + '<' }} {{ '<'|safe|e }} {{ '<'|safe|forceescape }} {{ '%s|%r|%.5s|%d'|safe % ('<', '<', '<&&', 3) }} {{ '%s&'|safe|format('<') }} {{ '<'|safe * 2 + '<' }} {{ ('<'|safe)|string + '<' }} {{ ['<'|safe, '<']|join + '<' }} {{ m|tojson + '<'|safe }} {{ '<'|safe + '>'|safe }} {{ '<'|safe == '<' }})J",
       R"J({"m": {"k": "<v>"}})J",
       R"J(<a>&lt;b&gt; &lt;b&gt;<a> <a><b> True False &lt;&lt; < &lt; &lt;|&#39;&lt;&#39;|&lt;&|3 &lt;& <<&lt; <&lt; <<< {&#34;k&#34;: &#34;&lt;v&gt;&#34;}< <> True)J"},
      {"MarkupSurvivesSet",
       R"J({% set x = '<'|safe %}{% set x = x + '&' %}{{ x }})J",
       R"J({})J",
       R"J(<&amp;)J"},
  };
  return cases;
}

struct ErrorCase {
  const char* name;
  const char* source;
  const char* context_json;
  const char* jinja_message;  // Python Jinja2's message; ours must contain it
};

inline const std::vector<ErrorCase>& error_cases() {
  static const std::vector<ErrorCase> cases = {
      {"AttributeOfUndefinedRaises", R"J({{ x.y }})J", R"J({})J", R"J('x' is undefined)J"},
      {"UndefinedInArithmetic", R"J({{ d.a + 'x' }})J", R"J({"d": {}})J", R"J('dict object' has no attribute 'a')J"},
      {"ListIndexOutOfRange", R"J({{ [1, 2][5] + 1 }})J", R"J({})J", R"J(list object has no element 5)J"},
      {"AddStrAndInt", R"J({{ 'a' + 1 }})J", R"J({})J", R"J(can only concatenate str (not "int") to str)J"},
      {"AddIntAndNone", R"J({{ 1 + none }})J", R"J({})J", R"J(unsupported operand type(s) for +: 'int' and 'NoneType')J"},
      {"OrderingMixedTypes", R"J({{ 1 < 'a' }})J", R"J({})J", R"J('<' not supported between instances of 'int' and 'str')J"},
      {"CallUndefined", R"J({{ foo() }})J", R"J({})J", R"J('foo' is undefined)J"},
      {"DivisionByZero", R"J({{ 1 / 0 }})J", R"J({})J", R"J(division by zero)J"},
      {"RaiseException", R"J({{ raise_exception('Conversation roles must alternate') }})J", R"J({})J", R"J(Conversation roles must alternate)J"},
      {"MutatingMethodIsUnsafe", R"J({{ [1].append(2) }})J", R"J({})J", R"J(access to attribute 'append' of 'list' object is unsafe.)J"},
      {"DictUpdateIsUnsafe", R"J({{ {'a': 1}.update({'b': 2}) }})J", R"J({})J", R"J(access to attribute 'update' of 'dict' object is unsafe.)J"},
      {"UnknownFilter", R"J({{ x|nosuchfilter }})J", R"J({})J", R"J(No filter named 'nosuchfilter'.)J"},
      {"UnknownTest", R"J({{ x is nosuchtest }})J", R"J({})J", R"J(No test named 'nosuchtest'.)J"},
      {"UnclosedFor", R"J({% for x in y %})J", R"J({})J", R"J(Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.)J"},
      {"StrayEndTag", R"J({% endif %})J", R"J({})J", R"J(Encountered unknown tag 'endif'.)J"},
      {"MissingExpression", R"J({% if %}{% endif %})J", R"J({})J", R"J(Expected an expression, got 'end of statement block')J"},
      {"UnclosedBlock", R"J({% if true %}x)J", R"J({})J", R"J(Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.)J"},
      {"UnclosedVariable", R"J({{ x )J", R"J({})J", R"J(unexpected end of template, expected 'end of print statement'.)J"},
      {"UnknownTag", R"J({% frobnicate %})J", R"J({})J", R"J(Encountered unknown tag 'frobnicate'.)J"},
      {"TojsonUndefined", R"J({{ x|tojson }})J", R"J({})J", R"J(Object of type Undefined is not JSON serializable)J"},
      {"IterateNone", R"J({% for x in none %}{% endfor %})J", R"J({})J", R"J('NoneType' object is not iterable)J"},
      {"AddMarkupAndInt", R"J({{ '<'|safe + 1 }})J", R"J({})J", R"J(unsupported operand type(s) for +: 'Markup' and 'int')J"},
      {"AddIntAndMarkup", R"J({{ 1 + '<'|safe }})J", R"J({})J", R"J(unsupported operand type(s) for +: 'int' and 'Markup')J"},
      {"UnpackMismatch", R"J({% for a, b in [[1, 2, 3]] %}{% endfor %})J", R"J({})J", R"J(too many values to unpack (expected 2))J"},
  };
  return cases;
}

}  // namespace kairo::jinja::testing
